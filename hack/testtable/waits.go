package main

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// waitPrefix starts a line in which a test binary says what it waited for and how long
// ("pressure-wait: node lock: 5m2s"); test/cluster.WaitLine writes them (a test here checks the two agree).
const waitPrefix = "pressure-wait: "

// waits sums a package's reported waits by what was waited for.
type waits map[string]time.Duration

// add returns w with the wait that the output line reports added (w unchanged when it reports none or
// its duration does not parse).
func (w waits) add(output string) waits {
	i := strings.Index(output, waitPrefix)
	if i < 0 {
		return w
	}
	what, dur, ok := strings.Cut(strings.TrimSpace(output[i+len(waitPrefix):]), ": ")
	if !ok {
		return w
	}
	d, err := time.ParseDuration(strings.TrimSpace(dur))
	if err != nil || d < 0 || what == "" {
		return w
	}
	if w == nil {
		w = waits{}
	}
	w[what] += d
	return w
}

// String lists the waits longest first (then by name), e.g. "node lock 5m2s, control plane start 9.3s";
// "" when there are none.
func (w waits) String() string {
	whats := make([]string, 0, len(w))
	for what := range w {
		whats = append(whats, what)
	}
	slices.SortFunc(whats, func(a, b string) int { return cmp.Or(cmp.Compare(w[b], w[a]), strings.Compare(a, b)) })
	parts := make([]string, len(whats))
	for i, what := range whats {
		parts[i] = what + " " + w[what].Round(100*time.Millisecond).String()
	}
	return strings.Join(parts, ", ")
}
