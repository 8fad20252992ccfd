package decision

import "strings"

// Kind classifies a trace entry.
type Kind string

// Trace entry kinds, roughly in the order a step produces them.
const (
	KindConfig      Kind = "config"       // nothing configured
	KindObservation Kind = "observe"      // an observation (or its absence) for a configured signal
	KindThreshold   Kind = "threshold"    // a threshold evaluated: met, not met, still met via min-reclaim
	KindGrace       Kind = "grace"        // grace period status of a met threshold
	KindCondition   Kind = "condition"    // node condition observed / reported / lingering / cleared
	KindStale       Kind = "stale"        // stale-stats guard dropped a threshold
	KindLocal       Kind = "local"        // local ephemeral-storage limit path
	KindResource    Kind = "resource"     // which threshold and resource the step acts on
	KindNote        Kind = "note"         // where the kubelet would be nondeterministic, or other remarks
	KindEvent       Kind = "event"        // node event
	KindReclaim     Kind = "node-reclaim" // node-level reclaim
	KindRank        Kind = "rank"         // one ranked pod and why it is before the next
	KindSkip        Kind = "skip"         // a ranked pod that cannot be evicted
	KindEvict       Kind = "evict"        // a pod evicted
	KindNothing     Kind = "nothing"      // why the step evicts nothing
)

// Entry is one line of a trace. Subject names what the entry is about (a threshold, a condition, a pod);
// Detail says what happened, with the compared values.
type Entry struct {
	Kind    Kind
	Subject string
	Detail  string
}

// String renders the entry as one line: "kind subject: detail".
func (e Entry) String() string {
	var b strings.Builder
	b.WriteString(string(e.Kind))
	if e.Subject != "" {
		b.WriteString(" ")
		b.WriteString(e.Subject)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Trace is the ordered list of reasons of a step. Its content is deterministic: map order never reaches it.
type Trace []Entry

// String renders the trace one entry per line.
func (t Trace) String() string {
	var b strings.Builder
	for _, e := range t {
		b.WriteString(e.String())
		b.WriteString("\n")
	}
	return b.String()
}

func (t *Trace) add(k Kind, subject, detail string) {
	*t = append(*t, Entry{Kind: k, Subject: subject, Detail: detail})
}
