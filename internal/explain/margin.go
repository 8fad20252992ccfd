package explain

import "time"

// Margin is the tightest signal of a report: the configured threshold whose observation is closest
// to (or furthest past) its threshold, relative to the signal's capacity.
type Margin struct {
	Signal    string `json:"signal"`
	Threshold string `json:"threshold"`
	// Available, Resolved (the threshold amount), Margin (Available − Resolved) and Capacity are
	// exact strings in the signal's unit, as in SignalRow.
	Available string `json:"available"`
	Resolved  string `json:"resolved"`
	Margin    string `json:"margin"`
	Capacity  string `json:"capacity"`
	// PercentOfCapacity is Margin as a percentage of Capacity (negative when the threshold is met).
	PercentOfCapacity float64 `json:"percentOfCapacity"`
	Met               bool    `json:"met"`
	// Human holds Available, Resolved and Margin for people ("9.7Gi").
	Human struct{ Available, Resolved, Margin string } `json:"-"`

	fraction float64
}

// TightestMargin returns the signal row of r with the smallest margin relative to its capacity;
// ties are broken by signal name, then threshold (a total order). ok is false when no configured
// threshold has an observation.
func TightestMargin(r Report) (m Margin, ok bool) {
	for _, row := range r.Signals {
		if !row.Observed || row.Resolved == "" {
			continue
		}
		c := Margin{Signal: row.Signal, Threshold: row.Threshold, Available: row.Available, Resolved: row.Resolved,
			Margin: row.Margin, Capacity: row.Capacity, Met: row.Met}
		capa := mustInt(row.Capacity)
		c.fraction = fraction(row.margn, capa)
		c.PercentOfCapacity = round1(c.fraction * 100)
		u := unitOfSignal(row.sig)
		c.Human.Available, c.Human.Resolved, c.Human.Margin = human(row.avail, u), human(mustInt(row.Resolved), u), human(row.margn, u)
		if !ok || tighter(c, m) {
			m, ok = c, true
		}
	}
	return m, ok
}

func fraction(margin, capacity int64) float64 {
	if capacity <= 0 {
		if margin < 0 {
			return -1
		}
		return 0
	}
	return float64(margin) / float64(capacity)
}

func tighter(a, b Margin) bool {
	if a.fraction != b.fraction {
		return a.fraction < b.fraction
	}
	if a.Signal != b.Signal {
		return a.Signal < b.Signal
	}
	return a.Threshold < b.Threshold
}

// TighterThan orders margins: the smaller margin relative to capacity first, then by signal and
// threshold name.
func (m Margin) TighterThan(o Margin) bool { return tighter(m, o) }

// Trend is how the tightest signal moved between two reports of one node.
type Trend struct {
	// Known is false when the two reports cannot give a trend: the signal is missing from either,
	// or its stats time did not advance (the kubelet served the same cached stats).
	Known bool
	// Falling is true when available decreased; TimeToThreshold is then the time until it reaches
	// the threshold at the same rate (0 when the threshold is already met).
	Falling         bool
	TimeToThreshold time.Duration
}

// TrendOf returns the trend of signal sig (a threshold spec, as Margin.Threshold) from prev to cur,
// by the observations' own stats times.
func TrendOf(prev, cur Report, threshold string) Trend {
	a, okA := rowOf(prev, threshold)
	b, okB := rowOf(cur, threshold)
	if !okA || !okB || a.StatsTime.IsZero() || !b.StatsTime.After(a.StatsTime) {
		return Trend{}
	}
	fall := a.avail - b.avail
	if fall <= 0 {
		return Trend{Known: true}
	}
	if b.margn <= 0 {
		return Trend{Known: true, Falling: true}
	}
	dt := b.StatsTime.Sub(a.StatsTime)
	return Trend{Known: true, Falling: true,
		TimeToThreshold: time.Duration(float64(dt) * float64(b.margn) / float64(fall)).Round(time.Second)}
}

func rowOf(r Report, threshold string) (SignalRow, bool) {
	for _, row := range r.Signals {
		if row.Threshold == threshold && row.Observed && row.Resolved != "" {
			return row, true
		}
	}
	return SignalRow{}, false
}
