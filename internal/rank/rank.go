package rank

import (
	"cmp"
	"fmt"
	"sort"

	"github.com/kube-pressure/pressure/internal/signal"
)

// Key names the comparison that decided the order of two adjacent candidates.
type Key string

// Keys, in the words explanations use.
const (
	KeyNoStats               Key = "no stats"
	KeyExceedsRequest        Key = "exceeds request"
	KeyPriority              Key = "priority"
	KeyUsageAboveRequest     Key = "usage above request"
	KeyProcessCount          Key = "process count"
	KeyExceedsDiskRequest    Key = "exceeds disk request"
	KeyDiskUsageAboveRequest Key = "disk usage above request"
	KeyTieName               Key = "tie (name)"
	KeyTieUID                Key = "tie (uid)"
	KeyTieInput              Key = "tie (input order)"
)

// Values are the per-candidate numbers the ranking compared.
type Values struct {
	// HasStats is false for a pod without stats; it then ranks before pods with stats in every
	// stats-based key.
	HasStats bool
	// Usage is the measured usage for the signal: working set bytes (memory), process count (pid),
	// disk bytes or inodes of the measured parts (disk signals).
	Usage int64
	// Request is the request Usage is compared with: the memory request (memory), the request of the
	// signal's resource (disk; always 0 for inodes), unused for pid.
	Request int64
	// Exceeds is Usage > Request (memory and disk signals).
	Exceeds bool
	// Priority is the pod priority (lower first).
	Priority int32
	// Score is what the last key compares, larger first: usage - request (memory), usage - the
	// ephemeral-storage request (disk, also for inodes: the kubelet quirk), the process count (pid).
	Score int64
}

// Entry is one ranked candidate.
type Entry struct {
	Candidate Candidate
	// Index is the candidate's position in the input slice.
	Index  int
	Values Values
}

// Step explains why Entries[i] ranks before Entries[i+1].
type Step struct {
	Key Key
	// Before and After render the compared values of the two entries for Key.
	Before, After string
}

// Ranking is the eviction order for one signal.
type Ranking struct {
	Signal  signal.Signal
	Layout  signal.FilesystemLayout
	Entries []Entry
	// Steps has len(Entries)-1 elements: Steps[i] is why Entries[i] comes before Entries[i+1].
	Steps []Step
	// Supported is false when the kubelet has no rank function for Signal; the order is then only
	// the tie-breaker.
	Supported bool
}

// Rank orders candidates for eviction under pressure on sig, exactly as the kubelet's rank function for
// that signal and filesystem layout orders them, then breaks remaining ties by namespace/name, then
// UID, then input position (our deliberate total order; the kubelet's sort is unstable).
func Rank(sig signal.Signal, layout signal.FilesystemLayout, cands []Candidate) Ranking {
	chain, ok := chainFor(sig, layout)
	r := Ranking{Signal: sig, Layout: layout, Supported: ok, Entries: make([]Entry, len(cands))}
	vf := valuesFunc(sig, layout)
	for i, c := range cands {
		r.Entries[i] = Entry{Candidate: c, Index: i, Values: vf(c)}
	}
	sort.SliceStable(r.Entries, func(i, j int) bool {
		k, _ := decide(chain, r.Entries[i], r.Entries[j])
		return k < 0
	})
	for i := 0; i+1 < len(r.Entries); i++ {
		_, step := decide(chain, r.Entries[i], r.Entries[i+1])
		r.Steps = append(r.Steps, step)
	}
	return r
}

// comparator compares two entries for one key: negative when a ranks first.
type comparator struct {
	key   Key
	stats bool // a stats-based key: missing stats rank first
	cmp   func(a, b Values) int
	show  func(v Values) string
}

// decide runs the chain then the tie-breakers and returns the result and the deciding step.
func decide(chain []comparator, a, b Entry) (int, Step) {
	for _, c := range chain {
		if c.stats && a.Values.HasStats != b.Values.HasStats {
			return cmpBool(!a.Values.HasStats, !b.Values.HasStats),
				Step{Key: KeyNoStats, Before: statsWord(a.Values), After: statsWord(b.Values)}
		}
		if c.stats && !a.Values.HasStats {
			continue // two stat-less pods compare equal on stats keys
		}
		if r := c.cmp(a.Values, b.Values); r != 0 {
			return r, Step{Key: c.key, Before: c.show(a.Values), After: c.show(b.Values)}
		}
	}
	return tieBreak(a, b)
}

// tieBreak is our total order beyond the kubelet's keys: namespace/name, then UID, then input index.
func tieBreak(a, b Entry) (int, Step) {
	an := a.Candidate.Namespace + "/" + a.Candidate.Name
	bn := b.Candidate.Namespace + "/" + b.Candidate.Name
	switch {
	case an != bn:
		return cmp.Compare(an, bn), Step{Key: KeyTieName, Before: an, After: bn}
	case a.Candidate.UID != b.Candidate.UID:
		return cmp.Compare(a.Candidate.UID, b.Candidate.UID),
			Step{Key: KeyTieUID, Before: a.Candidate.UID, After: b.Candidate.UID}
	}
	return cmp.Compare(a.Index, b.Index),
		Step{Key: KeyTieInput, Before: fmt.Sprint(a.Index), After: fmt.Sprint(b.Index)}
}

func statsWord(v Values) string {
	if v.HasStats {
		return "stats"
	}
	return "no stats"
}

// cmpBool places true before false, like the kubelet's cmpBool.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}
