package main

import (
	"encoding/json"
	"sort"
	"strings"
	"time"
)

// alloc is one "alloc" line of the stress pod's log: total bytes touched at time t.
type alloc struct {
	t     time.Time
	bytes int64
}

// parseStressLog reads the stress container's CRI log ("<time> stdout F <json>") and returns its alloc
// lines in order. Lines that are not stress JSON are skipped.
func parseStressLog(s string) []alloc {
	var out []alloc
	for _, l := range strings.Split(s, "\n") {
		f := strings.SplitN(l, " ", 4)
		if len(f) != 4 {
			continue
		}
		var e struct {
			T     string `json:"t"`
			Event string `json:"event"`
			Bytes *int64 `json:"bytes"`
		}
		if json.Unmarshal([]byte(f[3]), &e) != nil || e.Event != "alloc" || e.Bytes == nil {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, e.T)
		if err != nil {
			continue
		}
		out = append(out, alloc{t: t, bytes: *e.Bytes})
	}
	return out
}

// achievedRate is bytes per second between the first and the last alloc line.
func achievedRate(as []alloc) float64 {
	if len(as) < 2 {
		return 0
	}
	dt := as[len(as)-1].t.Sub(as[0].t).Seconds()
	if dt <= 0 {
		return 0
	}
	return float64(as[len(as)-1].bytes-as[0].bytes) / dt
}

// parseAgentLog returns, from the agent's log lines stamped at or after since (one agent pod serves
// several runs), the time of its first "evict" line for pod, every pod it evicted (outcome evicted or
// killed), and whether its trend rung killed pod on the node.
func parseAgentLog(s, pod string, since time.Time) (time.Time, []string, bool) {
	var first time.Time
	var victims []string
	trend := false
	for _, l := range strings.Split(s, "\n") {
		var e struct {
			Time    time.Time `json:"time"`
			Msg     string    `json:"msg"`
			Pod     string    `json:"pod"`
			Outcome string    `json:"outcome"`
		}
		if json.Unmarshal([]byte(l), &e) != nil || e.Time.Before(since) {
			continue
		}
		switch {
		case e.Msg == "evict":
			if e.Pod == pod && first.IsZero() {
				first = e.Time
			}
			if e.Outcome == "evicted" || e.Outcome == "killed" {
				victims = addOnce(victims, e.Pod)
			}
		case strings.HasPrefix(e.Msg, "killed on the node") && e.Pod == pod:
			trend = true
		}
	}
	return first, victims, trend
}

// percentile is the nearest-rank percentile p (0 < p <= 100) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	k := int(p/100*float64(len(s)) + 0.999999)
	return s[min(max(k, 1), len(s))-1]
}
