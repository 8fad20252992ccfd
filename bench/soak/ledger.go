package soak

import (
	"fmt"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
)

// corruptLedger is what FaultLedgerCorrupt writes into the ledger annotation: not JSON.
const corruptLedger = `{"soak":"corrupted ledger`

// LedgerSample is what one read of the node's ledger annotation held.
type LedgerSample struct {
	At time.Time `json:"at"`
	// Bytes is the annotation's size.
	Bytes int `json:"bytes"`
	// Entries and Avoidances count what it stores.
	Entries    int `json:"entries"`
	Avoidances int `json:"avoidances"`
	// Oldest is the oldest entry's eviction time (zero: no entry).
	Oldest time.Time `json:"oldest,omitzero"`
	// LastEnded is when the avoidance that ended longest ago ended (zero: none ended by At).
	LastEnded time.Time `json:"lastEnded,omitzero"`
	// Unreadable is why the annotation could not be read ("": it could, or it is absent).
	Unreadable string `json:"unreadable,omitempty"`
	// Corrupted: the annotation held the text the ledger-corrupt fault writes.
	Corrupted bool `json:"corrupted,omitempty"`
}

// ReadLedgerSample reads the ledger annotation's text as the agent does (loopbreaker.ReadLedger).
func ReadLedgerSample(at time.Time, text string) LedgerSample {
	s := LedgerSample{At: at, Bytes: len(text)}
	if text == "" {
		return s
	}
	h, err := loopbreaker.ReadLedger(strings.NewReader(text), policy.LoopConfig{})
	if err != nil {
		s.Unreadable, s.Corrupted = err.Error(), text == corruptLedger
		return s
	}
	entries, avoid := h.Stored()
	s.Entries, s.Avoidances = len(entries), len(avoid)
	if len(entries) > 0 {
		s.Oldest = entries[0].At
	}
	for _, a := range avoid {
		if !a.Until.After(at) && (s.LastEnded.IsZero() || a.Until.Before(s.LastEnded)) {
			s.LastEnded = a.Until
		}
	}
	return s
}

// LedgerBounded is invariant 7's judgement of the ledger. Its size follows the eviction rate (each
// eviction is kept for the loop window), so a trend in bytes says nothing; what must hold is that it
// forgets: no entry older than maxAge (the loop window, or the in-flight lifetime if longer, plus the
// breaker's pruning period and the sampling's slack), no avoidance still stored slack after it ended,
// and the agent can always read it (but right after the ledger-corrupt fault wrote its text). Each kind
// of violation is reported once, at its first sample, with how many samples showed it.
func LedgerBounded(samples []LedgerSample, maxAge, slack time.Duration) []Violation {
	var out []Violation
	report := func(kind string, n int, first string) {
		if n > 0 {
			out = append(out, Violation{InvLedgerBounded, fmt.Sprintf("%s in %d of %d samples, first %s", kind, n, len(samples), first)})
		}
	}
	var old, stale, bad int
	var firstOld, firstStale, firstBad string
	for _, s := range samples {
		at := s.At.UTC().Format(time.RFC3339)
		if !s.Oldest.IsZero() && s.At.Sub(s.Oldest) > maxAge {
			if old++; old == 1 {
				firstOld = fmt.Sprintf("at %s: an entry of %s, %s old (allowed %s)", at, s.Oldest.UTC().Format(time.RFC3339), s.At.Sub(s.Oldest).Round(time.Second), maxAge)
			}
		}
		if !s.LastEnded.IsZero() && s.At.Sub(s.LastEnded) > slack {
			if stale++; stale == 1 {
				firstStale = fmt.Sprintf("at %s: an avoidance that ended at %s", at, s.LastEnded.UTC().Format(time.RFC3339))
			}
		}
		if s.Unreadable != "" && !s.Corrupted {
			if bad++; bad == 1 {
				firstBad = fmt.Sprintf("at %s: %s", at, s.Unreadable)
			}
		}
	}
	report("an entry older than the loop window", old, firstOld)
	report("an ended avoidance still stored", stale, firstStale)
	report("an unreadable ledger", bad, firstBad)
	return out
}

// LedgerMaxAge is the oldest a ledger entry may be under the agent's default configuration: the loop
// window or the in-flight lifetime, whichever is longer, plus slack.
func LedgerMaxAge(slack time.Duration) time.Duration {
	return max(policy.DefaultLoopWindow, policy.DefaultInFlightTTL) + slack
}

// ledgerSlack is what the ledger's bounds allow beyond the loop window: the breaker prunes every few
// seconds and the sampler reads every sampleEvery, so a minute is ample.
const ledgerSlack = time.Minute

// maxEntries is the most entries any sample held.
func maxEntries(samples []LedgerSample) int {
	n := 0
	for _, s := range samples {
		n = max(n, s.Entries)
	}
	return n
}
