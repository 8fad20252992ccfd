package explain

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

// Paths of a Victim: which part of the kubelet's eviction manager evicts it.
const (
	PathLocalStorage = string(decision.PathLocalStorage) // over a local ephemeral-storage limit
	PathPressure     = string(decision.PathPressure)     // the threshold ranking
)

// decidedByLocalStorage is a local-storage victim's DecidedBy: that path comes before the ranking.
const decidedByLocalStorage = "local storage"

// Checks of a LocalStorageLimit, in the kubelet's order.
const (
	CheckEmptyDir  = "emptyDir"
	CheckPod       = "pod"
	CheckContainer = "container"
)

// LocalStorageLimit is the local ephemeral-storage limit a pod exceeds.
type LocalStorageLimit struct {
	// Check is the kubelet's check that fires, the first of: emptyDir (an emptyDir volume's
	// sizeLimit), pod (the pod's total ephemeral-storage limit: its containers' limits, as the
	// scheduler sums them, plus overhead) and container (one container's ephemeral-storage limit).
	Check string `json:"check"`
	// EvictionSignal is the eviction_signal label of kubelet_evictions for it.
	EvictionSignal string `json:"evictionSignal"`
	// Name is the emptyDir volume or the container ("" for the pod's total limit).
	Name string `json:"name,omitempty"`
	// Used is the usage compared with Limit, in bytes: the volume's used bytes, the pod's
	// ephemeral-storage usage, or the container's logs plus, without a dedicated imagefs, its
	// writable layer. The kubelet evicts when Used > Limit. A limit that is not a whole number of
	// bytes (the API accepts "1500m") is the quantity as the kubelet prints it.
	Used  string `json:"used"`
	Limit string `json:"limit"`

	used, limit int64
	quantity    string // the limit as the kubelet prints it ("500M", "1Gi")
	fraction    bool   // the limit is not a whole number of bytes (limit is rounded up)
}

var checkOfLabel = map[string]string{decision.LabelEmptyDirLimit: CheckEmptyDir,
	decision.LabelEphemeralPodLimit: CheckPod, decision.LabelEphemeralContainerLim: CheckContainer}

func storageLimit(e decision.Eviction) *LocalStorageLimit {
	if e.Limit == nil {
		return nil
	}
	l := e.Limit
	out := &LocalStorageLimit{Check: checkOfLabel[e.MetricLabel], EvictionSignal: e.MetricLabel, Name: l.Name,
		Used: exact(l.Used, unitBytes), Limit: exact(l.Limit.Value, unitBytes), used: l.Used, limit: l.Limit.Value,
		quantity: l.Limit.String()}
	if l.Limit.Fraction != "" {
		out.Limit, out.fraction = l.Limit.Fraction, true
	}
	return out
}

// words names the limit: `emptyDir "scratch" sizeLimit`, `pod ephemeral-storage limit`, ...
func (l *LocalStorageLimit) words() string {
	switch l.Check {
	case CheckEmptyDir:
		return fmt.Sprintf("emptyDir %q sizeLimit", l.Name)
	case CheckContainer:
		return fmt.Sprintf("container %s ephemeral-storage limit", l.Name)
	}
	return "pod ephemeral-storage limit"
}

// overWords says it with the amounts: `exceeds its emptyDir "scratch" sizeLimit 1Gi by 1Mi (uses 1.0Gi)`.
func (l *LocalStorageLimit) overWords() string {
	if l.fraction {
		return fmt.Sprintf("exceeds its %s %s (uses %s)", l.words(), l.quantity, human(l.used, unitBytes))
	}
	return fmt.Sprintf("exceeds its %s %s by %s (uses %s)", l.words(), l.quantity, l.overBy(), human(l.used, unitBytes))
}

// overBy is how far the usage is above the limit ("-" for a fractional limit).
func (l *LocalStorageLimit) overBy() string {
	if l.fraction {
		return "-"
	}
	return human(l.used-l.limit, unitBytes)
}

// localVictims renders the local-storage group of p (in the order of the candidates, ours).
func localVictims(p decision.Prediction, cands []rank.Candidate, now time.Time) []Victim {
	byUID := make(map[string]rank.Candidate, len(cands))
	for _, c := range cands {
		byUID[c.UID] = c
	}
	out := []Victim{}
	for _, e := range p.LocalStorage {
		c := byUID[e.UID]
		v := Victim{Pod: podName(c), UID: c.UID, QOSClass: c.QOSClass, Priority: c.Priority, HasStats: true,
			Path: PathLocalStorage, LocalStorage: storageLimit(e), Message: e.Message, GracePeriodSeconds: e.Grace.Effective}
		if c.Stats != nil && !c.Stats.Time.IsZero() && !now.IsZero() {
			v.StatsAgeSeconds = seconds(now.Sub(c.Stats.Time))
		}
		out = append(out, v)
	}
	for i := 0; i+1 < len(out); i++ {
		out[i].DecidedBy = decidedByLocalStorage
		out[i].Why = "both exceed a local-storage limit: the kubelet evicts both in the same synchronize, " +
			"in its active-pod order (unspecified); listed by namespace/name"
	}
	return out
}

// linkLocal says why the last local-storage victim goes before the first ranked pod.
func linkLocal(order []Victim, nLocal int) {
	if nLocal == 0 || nLocal >= len(order) {
		return
	}
	last := &order[nLocal-1]
	last.DecidedBy = decidedByLocalStorage
	last.Why = fmt.Sprintf("%s %s: the kubelet evicts pods over a local-storage limit before it acts on any threshold, "+
		"and evicts nothing else in that synchronize", last.Pod, last.LocalStorage.overWords())
}

// refusedLocal marks the ranked critical pods over a local-storage limit and returns a note for each
// such pod (ranked or not).
func refusedLocal(p decision.Prediction, order []Victim) []string {
	var notes []string
	for _, r := range p.LocalStorageRefused {
		l := storageLimit(r.Eviction)
		for i := range order {
			if order[i].UID == r.Eviction.UID && order[i].Critical {
				order[i].LocalStorage = l
			}
		}
		notes = append(notes, fmt.Sprintf("%s/%s %s, but it is critical (%s): the kubelet refuses to evict it at every "+
			"synchronize (it logs \"cannot evict a critical pod\")", r.Eviction.Namespace, r.Eviction.Name, l.overWords(),
			r.CriticalReason))
	}
	return notes
}

// localNotes explains the local-storage group, or that the path is off.
func localNotes(isolation bool, local []Victim, layout signal.FilesystemLayout) []string {
	if !isolation {
		return []string{"localStorageCapacityIsolation is false: the kubelet enforces no emptyDir sizeLimit and no " +
			"ephemeral-storage limit"}
	}
	if len(local) == 0 {
		return nil
	}
	var containers bool
	for _, v := range local {
		containers = containers || v.LocalStorage.Check == CheckContainer
	}
	note := fmt.Sprintf("%s over a local ephemeral-storage limit: the kubelet evicts %s at its next "+
		"synchronize, grace 1s, whether or not a threshold is met, and evicts nothing for pressure in that synchronize",
		count(len(local), "pod is", "pods are"), pick(len(local) == 1, "it", "all of them"))
	if len(local) > 1 {
		note += "; the order among them is the kubelet's active-pod order, which is unspecified (listed by namespace/name)"
	}
	out := []string{note}
	if containers {
		what := "logs and writable layer"
		if layout.DedicatedImageFs {
			what = "logs only (the writable layer is on the dedicated imagefs)"
		}
		out = append(out, "a container's ephemeral-storage usage is its "+what)
	}
	return out
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

// localHeader is the text summary line of the group.
func localHeader(local []Victim) string {
	return count(len(local), "pod", "pods") + " over a local ephemeral-storage limit: evicted first, at the next synchronize"
}

// splitLocal splits the order into its local-storage group (always first) and the ranking.
func splitLocal(order []Victim) (local, ranked []Victim) {
	n := 0
	for n < len(order) && order[n].Path == PathLocalStorage {
		n++
	}
	return order[:n], order[n:]
}

// localOrder prints the local-storage group.
func (p *printer) localOrder(vs []Victim) {
	if len(vs) == 0 {
		return
	}
	p.printf("\n")
	p.prose("  ", "", "Over a local ephemeral-storage limit, evicted together at the next synchronize:")
	t := [][]string{{"#", "POD", "QOS", "PRIORITY", "LIMIT EXCEEDED", "USAGE", "LIMIT", "OVER BY", "STATS AGE"}}
	for i, v := range vs {
		statsAge := "-"
		if v.StatsAgeSeconds != nil {
			statsAge = age(time.Duration(*v.StatsAgeSeconds * float64(time.Second)))
		}
		l := v.LocalStorage
		t = append(t, []string{fmt.Sprint(i + 1), v.Pod, v.QOSClass, fmt.Sprint(v.Priority), l.words(),
			human(l.used, unitBytes), l.quantity, l.overBy(), statsAge})
	}
	p.table(t)
}

// localMessages prints the kubelet's message for every pod of the group.
func (p *printer) localMessages(vs []Victim) {
	if len(vs) == 0 {
		return
	}
	p.printf("\n  Local-storage victims, grace period %ds. The kubelet's messages (pod status and Evicted event; "+
		"no DisruptionTarget condition):\n", vs[0].GracePeriodSeconds)
	for _, v := range vs {
		p.printf("    %s: %q\n", v.Pod, v.Message)
	}
}
