package explain

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
