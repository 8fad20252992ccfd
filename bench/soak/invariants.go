package soak

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/why"
	"github.com/kube-pressure/pressure/test/oomkill"
)

// The invariants of issue 32 the driver checks, each named after the item number.
const (
	InvNoForeignOOMKill  = "1 no kernel OOM kill in the pods cgroup but a container's or pod's own limit"
	InvNoCriticalEvicted = "3 no critical pod evicted"
	InvNoDoubleEviction  = "3 no pod evicted twice"
	InvPDBKept           = "3 no PDB broken by the agent's (soft) evictions"
	InvSimulate          = "2 kubectl pressure simulate on the episode's recording names the agent's victims"
	InvWhy               = "4 kubectl pressure why gives each evicted pod the right verdict"
	InvSchedulesAgain    = "6 a calm node schedules an unrelated pod within the taint's hysteresis plus 20 s"
	InvShellsCollected   = "5 no Evicted shell older than the janitor's TTL plus a minute"
	InvEvidence          = "5 an evidence Event for each collected shell"
	InvFlat              = "7 RSS and goroutines flat over the second half"
	InvLedgerBounded     = "7 the ledger forgets: no entry older than the loop window, no ended avoidance kept"
	InvNoRestarts        = "7 no agent or janitor restart but by an injected fault"
)

// Invariants are every invariant name, in the order: the report counts each.
func Invariants() []string {
	return []string{InvNoForeignOOMKill, InvSimulate, InvNoCriticalEvicted, InvNoDoubleEviction, InvPDBKept, InvWhy,
		InvShellsCollected, InvEvidence, InvSchedulesAgain, InvFlat, InvLedgerBounded, InvNoRestarts}
}

// Violation is one broken invariant, with what broke it.
type Violation struct {
	Invariant string `json:"invariant"`
	Message   string `json:"message"`
}

func (v Violation) String() string { return "invariant " + v.Invariant + ": " + v.Message }

// NoForeignOOMKill is invariant 1 over the kernel's OOM kills in (or possibly in) the pods cgroup
// during an episode and the rise of the pods cgroup's oom_kill counter (memory.oom_control). A kill is
// allowed only when the memory cgroup whose limit was hit is a pod's or below it (a container hitting
// its own limit): a kill at the pods cgroup's or a QoS class's limit, a global OOM, or a kill whose
// cgroup the kernel's rate limit hid is a violation; so is a counter that rose more than the kernel
// log shows kills (a kill nobody can place).
func NoForeignOOMKill(kills []oomkill.Kill, podsCgroup string, counterRise int) []Violation {
	var out []Violation
	for _, k := range kills {
		switch {
		case !k.Attributed:
			out = append(out, Violation{InvNoForeignOOMKill, fmt.Sprintf("%s: cannot tell whose limit it was", k)})
		case k.Global:
			out = append(out, Violation{InvNoForeignOOMKill, fmt.Sprintf("%s: a global OOM", k)})
		case !podLevel(k.OOMMemcg, podsCgroup):
			out = append(out, Violation{InvNoForeignOOMKill, fmt.Sprintf("%s: the limit of %s was hit, not the container's own", k, k.OOMMemcg)})
		}
	}
	if counterRise > len(kills) {
		out = append(out, Violation{InvNoForeignOOMKill, fmt.Sprintf("the pods cgroup's oom_kill counter rose by %d, the kernel log shows %d kills",
			counterRise, len(kills))})
	}
	return out
}

// podLevel reports whether memcg is a pod's cgroup below podsCgroup (kubepods/pod<uid> or
// kubepods/<qos>/pod<uid>) or below a pod's.
func podLevel(memcg, podsCgroup string) bool {
	root := "/" + strings.Trim(podsCgroup, "/") + "/"
	rest, ok := strings.CutPrefix(memcg, root)
	if !ok {
		return false
	}
	for _, seg := range strings.Split(rest, "/") {
		if strings.HasPrefix(seg, "pod") {
			return true
		}
	}
	return false
}

// Eviction is one eviction an episode observed.
type Eviction struct {
	Namespace string    `json:"namespace"`
	Pod       string    `json:"pod"`
	At        time.Time `json:"at"`
	// By is "agent" (an eviction request the API server answered 201, or a DELETE of the pod by the
	// agent's service account answered 200, from its audit log) or "kubelet" (an Evicted Event of the
	// kubelet).
	By string `json:"by"`
	// Rung is "delete" for the agent's DELETE of the pod (after a PodDisruptionBudget refused a hard
	// eviction), "" for an eviction.
	Rung string `json:"rung,omitempty"`
	// Critical marks the episode's critical pod; PDB names the PodDisruptionBudget selecting the pod.
	Critical bool   `json:"critical,omitempty"`
	PDB      string `json:"pdb,omitempty"`
}

func (e Eviction) String() string {
	return fmt.Sprintf("%s/%s by the %s at %s", e.Namespace, e.Pod, e.By, e.At.Format("15:04:05.000"))
}

// NoCriticalEvicted is invariant 3's first part: no eviction of a critical pod, by anyone.
func NoCriticalEvicted(evs []Eviction) []Violation {
	var out []Violation
	for _, e := range evs {
		if e.Critical {
			out = append(out, Violation{InvNoCriticalEvicted, "critical pod evicted: " + e.String()})
		}
	}
	return out
}

// NoPodEvictedTwice is invariant 3's second part: each pod evicted at most once, counting the agent's
// successful requests and the kubelet's evictions together. One pair is not a violation: the agent's
// eviction accepted while the API server came back from a restart, then the kubelet's own eviction of
// the same pod, both within reconnect (the API server's stop to 60 s after its return; zero: no restart).
// The kubelet's pod watch reconnects with client-go's reflector backoff (800 ms doubling to 30 s, with
// up to as much again as jitter), so the deletion can reach the kubelet after its own eviction manager
// has picked the same pod: the pod dies once, by the kubelet's hand, and no other pod is evicted (soak
// seed 1, episode 1 of a flake-check: the kubelet evicted hog-0 12.8 s after the agent's eviction,
// 13.6 s after the API server's return). Such a pair counts once, and a note says so.
func NoPodEvictedTwice(evs []Eviction, reconnect Window) (out []Violation, notes []string) {
	by, keys := byPod(evs)
	for _, k := range keys {
		es := by[k]
		if len(es) == 2 && backstopOfAcceptedEviction(es[0], es[1], reconnect) {
			notes = append(notes, fmt.Sprintf("%s: the kubelet evicted it %s after the agent's accepted eviction, both while its pod watch could still be reconnecting after the API server's restart (%s): counted once",
				k, es[1].At.Sub(es[0].At).Round(100*time.Millisecond), reconnect))
			continue
		}
		if len(es) > 1 {
			s := make([]string, len(es))
			for i, e := range es {
				s[i] = e.String()
			}
			out = append(out, Violation{InvNoDoubleEviction, fmt.Sprintf("%s evicted %d times: %s", k, len(es), strings.Join(s, "; "))})
		}
	}
	return out, notes
}

// byPod groups evs by namespace/pod, each group in the order of evs, and returns the keys sorted.
func byPod(evs []Eviction) (map[string][]Eviction, []string) {
	by := map[string][]Eviction{}
	var keys []string
	for _, e := range evs {
		k := e.Namespace + "/" + e.Pod
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], e)
	}
	slices.Sort(keys)
	return by, keys
}

// backstopOfAcceptedEviction: first is the agent's eviction and second the kubelet's later one, both
// within reconnect.
func backstopOfAcceptedEviction(first, second Eviction, reconnect Window) bool {
	return first.By == "agent" && first.Rung == "" && second.By == "kubelet" && first.At.Before(second.At) &&
		reconnect.Contains(first.At) && reconnect.Contains(second.At)
}

// KubeletWatchReconnect bounds how long after the API server's return the kubelet's pod watch may still
// be reconnecting: client-go's reflector backoff caps at 30 s, and its jitter adds up to as much again.
const KubeletWatchReconnect = 60 * time.Second

// Window is a span of time [From, To]; the zero Window contains nothing.
type Window struct{ From, To time.Time }

// Contains says whether t falls within w.
func (w Window) Contains(t time.Time) bool {
	return !w.From.IsZero() && !t.Before(w.From) && !t.After(w.To)
}

func (w Window) String() string {
	return fmt.Sprintf("%s to %s", w.From.Format("15:04:05.000"), w.To.Format("15:04:05.000"))
}

// PDBSample is a PodDisruptionBudget's status at one moment.
type PDBSample struct {
	At                 time.Time `json:"at"`
	Namespace, Name    string
	DisruptionsAllowed int32 `json:"disruptionsAllowed"`
}

// PDBKept is invariant 3's third part: each agent eviction of a PDB-protected pod was one the budget
// allowed, reckoning from the budget's last sample before it less the agent's evictions of its pods
// since that sample. The kubelet's hard evictions are not judged: they ignore budgets by design; nor is
// the agent's DELETE (Rung "delete"), its ladder's fallback under a hard threshold after the budget
// refused (eviction.allowDelete), though it counts against the budget for the evictions after it.
func PDBKept(samples []PDBSample, evs []Eviction) []Violation {
	var out []Violation
	for _, e := range evs {
		if e.By != "agent" || e.PDB == "" || e.Rung == "delete" {
			continue
		}
		var last *PDBSample
		for i := range samples {
			s := &samples[i]
			if s.Namespace == e.Namespace && s.Name == e.PDB && !s.At.After(e.At) && (last == nil || s.At.After(last.At)) {
				last = s
			}
		}
		if last == nil {
			continue // no sample before it: nothing to judge by
		}
		allowed := last.DisruptionsAllowed
		for _, o := range evs {
			if o.By == "agent" && o.Namespace == e.Namespace && o.PDB == e.PDB && o.At.After(last.At) && o.At.Before(e.At) {
				allowed--
			}
		}
		if allowed <= 0 {
			out = append(out, Violation{InvPDBKept, fmt.Sprintf("%s: PDB %s allowed %d disruptions at %s, %d after the agent's earlier evictions",
				e, e.PDB, last.DisruptionsAllowed, last.At.Format("15:04:05.000"), allowed)})
		}
	}
	return out
}

// Shell is a Failed pod with reason Evicted still on the API server.
type Shell struct {
	Namespace, Pod string
	// FinishedAt is when it was evicted (its last container's finish, else its Ready condition's change).
	FinishedAt time.Time
	// Owner is the UID of its controller owner ("" for a bare pod); Created its creation time.
	Owner   string    `json:"owner,omitempty"`
	Created time.Time `json:"created,omitzero"`
}

// ShellsCollected is invariant 5's first part: no shell present at now that was evicted more than the
// janitor's ttl plus a minute before, but those the janitor keeps by design: the newest keepPerOwner
// shells of each controller owner (the chart's default janitor.config.keepPerOwner is 1, "for
// debugging"; newest by eviction time, then creation time, then name, docs/janitor.md). A bare pod has
// no owner and is never kept. (Soak episode 66 of seed 20261205: the kubelet evicted two pods of a
// Deployment's ReplicaSet; the janitor deleted the older at its TTL and kept the newer.)
func ShellsCollected(shells []Shell, now time.Time, ttl time.Duration, keepPerOwner int) []Violation {
	kept := map[string]bool{}
	byOwner := map[string][]Shell{}
	for _, s := range shells {
		if s.Owner != "" {
			byOwner[s.Owner] = append(byOwner[s.Owner], s)
		}
	}
	for _, group := range byOwner {
		slices.SortFunc(group, func(a, b Shell) int {
			if c := b.FinishedAt.Compare(a.FinishedAt); c != 0 {
				return c
			}
			if c := b.Created.Compare(a.Created); c != 0 {
				return c
			}
			return strings.Compare(a.Pod, b.Pod)
		})
		for _, s := range group[:min(keepPerOwner, len(group))] {
			kept[s.Namespace+"/"+s.Pod] = true
		}
	}
	var out []Violation
	for _, s := range shells {
		if age := now.Sub(s.FinishedAt); age > ttl+time.Minute && !kept[s.Namespace+"/"+s.Pod] {
			out = append(out, Violation{InvShellsCollected, fmt.Sprintf("%s/%s evicted %s ago, the janitor's TTL is %s",
				s.Namespace, s.Pod, age.Round(time.Second), ttl)})
		}
	}
	return out
}

// EvidenceEvent is one EvictedPodDeleted Event: its namespace and its message plus its evidence
// annotation.
type EvidenceEvent struct {
	Namespace, Text string
}

// EvidenceForEach is invariant 5's second part: each collected shell (namespace/pod: an Evicted shell
// seen once and gone since, which only the janitor deletes) is named by an evidence Event of its
// namespace, in the message ("Deleted pod NAME (") or the annotation ("pod":"NAME").
func EvidenceForEach(collected []string, evidence []EvidenceEvent) []Violation {
	var out []Violation
	for _, c := range collected {
		ns, pod, _ := strings.Cut(c, "/")
		found := false
		for _, e := range evidence {
			if e.Namespace == ns && (strings.Contains(e.Text, "Deleted pod "+pod+" (") || strings.Contains(e.Text, `"pod":"`+pod+`"`)) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, Violation{InvEvidence, fmt.Sprintf("shell %s was deleted and no %s Event of %s names it", c, "EvictedPodDeleted", ns)})
		}
	}
	return out
}

// WhyAgrees is invariant 4: `kubectl pressure why` names each pod evicted once (by the agent or the
// kubelet) with the matching cause. verdicts maps namespace/pod to the verdict's cause, or to the
// error why gave. A pair NoPodEvictedTwice counts once (the kubelet's eviction of a pod the agent evicted
// as the API server came back, within reconnect) may be named for either eviction; any other pod evicted
// twice is left to NoPodEvictedTwice.
func WhyAgrees(evs []Eviction, verdicts map[string]string, reconnect Window) []Violation {
	want := map[string]why.Cause{"agent": why.CauseAgentEviction, "kubelet": why.CauseKubeletEviction}
	by, keys := byPod(evs)
	var out []Violation
	for _, k := range keys {
		es := by[k]
		got, ok := verdicts[k]
		switch {
		case len(es) == 1:
			if e := es[0]; !ok || got != string(want[e.By]) {
				out = append(out, Violation{InvWhy, fmt.Sprintf("%s: why says %q, want %s", e, got, want[e.By])})
			}
		case len(es) == 2 && backstopOfAcceptedEviction(es[0], es[1], reconnect):
			if !ok || got != string(why.CauseAgentEviction) && got != string(why.CauseKubeletEviction) {
				out = append(out, Violation{InvWhy, fmt.Sprintf("%s, then %s: why says %q, want %s or %s", es[0], es[1], got,
					why.CauseAgentEviction, why.CauseKubeletEviction)})
			}
		}
	}
	return out
}

// SchedulesAgain is invariant 6: once the episode's node was calm, the loop breaker keeps its promise,
// its taint hysteresis (the chart's default loopBreaker.taintHysteresis, 10 s) plus 20 s for the agent's
// sync, the scheduler and the container's start:
//   - no taint of the agent's (pressure.kube-pressure.io/...) is on the node past the promise;
//   - an unrelated pod created at calm runs within it (took; < 0: it never ran within the wait), unless
//     the episode's fault restarted a component the pod's start depends on (the API server, the kubelet,
//     containerd) and no NoSchedule or NoExecute taint at all held the node past the promise: then the
//     delay is that component's recovery (after the test API server's restart the scheduler's watches
//     are refused until its authorizer is ready, and back off: soak episode 23 of seed 20261205 ran its
//     probe 50 s after calm with no taint seen), not the loop breaker's.
//
// taints are the node's taints seen while the probe waited, as taintsSeen lists them ("key:effect (seen
// 1s to 30s)"). A capped episode (not calm) is not judged.
func SchedulesAgain(calm bool, took time.Duration, taints []string, hysteresis time.Duration, fault FaultKind) []Violation {
	if !calm {
		return nil
	}
	promise := hysteresis + 20*time.Second
	ours, any := time.Duration(-1), time.Duration(-1)
	for _, s := range taints {
		key, last, ok := parseTaintSeen(s)
		if !ok {
			continue
		}
		if strings.HasPrefix(key, agentTaintPrefix) {
			ours = max(ours, last)
		}
		any = max(any, last)
	}
	if ours > promise {
		return []Violation{{InvSchedulesAgain, fmt.Sprintf("the agent's taint was on the node %s after calm, past the promise %s (taints seen: %s)",
			ours, promise, strings.Join(taints, ", "))}}
	}
	if took >= 0 && took <= promise {
		return nil
	}
	if restartsAComponent(fault) && any <= promise {
		return nil
	}
	what := "did not run"
	if took >= 0 {
		what = "ran after " + took.Round(time.Millisecond).String()
	}
	return []Violation{{InvSchedulesAgain, fmt.Sprintf("the probe pod %s, want within %s (taints seen: %s)", what, promise, strings.Join(taints, ", "))}}
}

// agentTaintPrefix starts the keys of the agent's taints (loopbreaker.TaintKey).
const agentTaintPrefix = "pressure.kube-pressure.io/"

// restartsAComponent reports whether the fault stops or restarts a component an unrelated pod's start
// depends on (the API server, the kubelet, containerd).
func restartsAComponent(f FaultKind) bool {
	return f == FaultAPIServerStop || f == FaultKubeletRestart || f == FaultContainerdRestart
}

// taintSeen matches one entry of taintsSeen.list: "key:effect (seen 1s to 30s)".
var taintSeen = regexp.MustCompile(`^(\S+):\S+ \(seen \S+ to (\S+)\)$`)

// parseTaintSeen returns the taint's key and when it was last seen.
func parseTaintSeen(s string) (string, time.Duration, bool) {
	m := taintSeen.FindStringSubmatch(s)
	if m == nil {
		return "", 0, false
	}
	last, err := time.ParseDuration(m[2])
	if err != nil {
		return "", 0, false
	}
	return m[1], last, true
}

// SimulateAgrees is invariant 2: the pods the real agent evicted (its successful eviction requests and
// its DELETEs after a PodDisruptionBudget's refusal) are the pods `kubectl pressure simulate` on the
// episode's recording has pressure-agent evict (predicted, namespace/pod), as sets. An episode with a
// fault is not judged: the simulator does not model an API outage, a killed agent or a corrupted ledger.
//
// The eviction lead acts on a fall measured between two of the agent's reads; the real agent reads the
// cgroups at moments of its own, simulate at the recording's samples, and a fall's rate moves with the
// moment: by about 10% over 100ms samples (soak seed 20261205, episode 78: 36 to 44 MiB per sample on one
// ramp), and across the bound itself when the fall lasts only a few of the poll's reads (seed 1, episode
// 0: two hogs and a cache pod starting together, about 900 MiB/s for 0.7 s; simulate's agent evicts
// hog-0 with its reads at 5 of 8 phases of its poll, 125ms apart, and not at the other 3). The
// recording does not show when the agent read. So a lead decision near its bound goes either way. near holds simulate's
// victims at the tolerated settings (Tolerance: the lead 10% shorter and longer, and the agent's reads
// at other phases of its poll), by the --set value; when the victims differ at the configured settings
// and agree at one of those, the episode agrees and note says so (the summary counts such episodes
// apart).
func SimulateAgrees(evs []Eviction, predicted []string, near map[string][]string, faulted bool) (vs []Violation, note string) {
	if faulted {
		return nil, ""
	}
	real := map[string]bool{}
	for _, e := range evs {
		if e.By == "agent" {
			real[e.Namespace+"/"+e.Pod] = true
		}
	}
	missed, extra := setDiff(real, predicted)
	if len(missed)+len(extra) == 0 {
		return nil, ""
	}
	for _, set := range slices.Sorted(maps.Keys(near)) {
		if m, x := setDiff(real, near[set]); len(m)+len(x) == 0 {
			return nil, fmt.Sprintf("simulate's victims at the configured settings differ (only simulate: %v; only the agent: %v); "+
				"at --set %s they are the agent's: a lead decision at its margin (of the lead, or of the moments the agent read)", extra, missed, set)
		}
	}
	return []Violation{{InvSimulate, fmt.Sprintf("the agent evicted %v that simulate does not predict, simulate predicts %v that it did not evict", missed, extra)}}, ""
}

// setDiff returns the keys of real not in predicted (missed) and the predicted not in real (extra),
// each sorted.
func setDiff(real map[string]bool, predicted []string) (missed, extra []string) {
	sim := map[string]bool{}
	for _, p := range predicted {
		if !real[p] && !sim[p] {
			extra = append(extra, p)
		}
		sim[p] = true
	}
	for k := range real {
		if !sim[k] {
			missed = append(missed, k)
		}
	}
	slices.Sort(missed)
	slices.Sort(extra)
	return missed, extra
}

// LeadTolerance returns the simulate --set values of the eviction lead 10% shorter and longer than lead
// (the agent's configured one): the leads SimulateAgrees also accepts.
func LeadTolerance(lead time.Duration) []string {
	return []string{"agent.evictionLead=" + (lead * 9 / 10).String(), "agent.evictionLead=" + (lead * 11 / 10).String()}
}

// PhaseSteps is how many phases of the agent's poll PhaseTolerance tries, the configured one included.
const PhaseSteps = 8

// PhaseTolerance returns the simulate --set values of the agent's read phase (timing.agentPhase) at
// each PhaseSteps-th of poll, the agent's longest wait between two reads of its poll, but the phase 0
// simulate uses by default: the phases SimulateAgrees also accepts.
func PhaseTolerance(poll time.Duration) []string {
	var out []string
	for k := 1; k < PhaseSteps; k++ {
		out = append(out, "timing.agentPhase="+(poll*time.Duration(k)/PhaseSteps).String())
	}
	return out
}

// Tolerance is every --set value SimulateAgrees accepts beside the configured settings: LeadTolerance of
// lead and PhaseTolerance of poll.
func Tolerance(lead, poll time.Duration) []string {
	return append(LeadTolerance(lead), PhaseTolerance(poll)...)
}
