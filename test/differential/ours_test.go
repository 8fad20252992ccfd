package differential

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// ourConfig turns the case's KubeletConfiguration into our Config (file semantics), with the
// containerfs thresholds derived for the case's filesystem layout as the kubelet's first sync does.
// sem is the core's semantics of release rel with the configuration's feature gates. idle reports the kubelet's "nothing to do" configuration (no thresholds and no local-storage
// isolation), in which synchronize returns before reading anything. It is judged before the
// containerfs derivation, as the kubelet's check runs before it.
func ourConfig(c *Case, rel release) (cfg threshold.Config, sem decision.Semantics, lsci, idle bool, err error) {
	kc, err := kubeconv.LoadKubeletConfig(bytes.NewReader(c.KubeletConfig), c.Name)
	if err != nil {
		return cfg, sem, false, false, err
	}
	sem = semanticsFor(rel, kc)
	in := kc.ThresholdInput()
	in.ExperimentalAllocatableIgnoreEviction = c.ExperimentalAllocatableIgnoreEviction
	cfg, err = threshold.ParseConfig(in)
	if err != nil {
		return cfg, sem, false, false, err
	}
	lsci = kc.Config.LocalStorageCapacityIsolation == nil || *kc.Config.LocalStorageCapacityIsolation
	idle = len(cfg.Thresholds) == 0 && !lsci
	ts, _ := threshold.UpdateContainerFsThresholds(cfg.Thresholds, c.DedicatedImageFs, c.SplitContainerFs)
	cfg.Thresholds = ts
	return cfg, sem, lsci, idle, nil
}

// ourStep runs one step of our core, including the second call after node-level reclaim.
func ourStep(st decision.State, in decision.Input, after *signal.Snapshot) (decision.State, decision.Decision) {
	next, d := decision.Step(st, in)
	if d.NodeReclaim != nil && d.NodeReclaim.Pending {
		in.AfterReclaim = after
		next, d = decision.Step(st, in)
	}
	return next, d
}

// view renders our decision in the oracle's StepResult form.
func view(d decision.Decision, conds []signal.NodeCondition, probes []v1.Pod) StepResult {
	sr := StepResult{SummaryCalls: 1}
	for _, e := range d.Evictions {
		ov := e.Grace.Override
		ev := Eviction{UID: e.UID, Namespace: e.Namespace, Name: e.Name, IsEvicted: true, GracePeriodOverride: &ov,
			Phase: "Failed", Reason: decision.Reason, Message: e.Message,
			Event: &Event{Kind: "Pod", Namespace: e.Namespace, Name: e.Name, Type: "Warning", Reason: decision.Reason,
				Message: e.Message, Annotations: nonEmpty(e.Annotations)}}
		if c := e.Condition; c != nil {
			ev.Condition = &Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}
		}
		sr.Evictions = append(sr.Evictions, ev)
		if sr.EvictionCounts == nil {
			sr.EvictionCounts = map[string]float64{}
		}
		sr.EvictionCounts[e.MetricLabel]++
	}
	if ne := d.NodeEvent; ne != nil {
		sr.NodeEvents = []Event{{Kind: "Node", Name: "node", Type: ne.Type, Reason: ne.Reason, Message: ne.Message}}
	}
	if nr := d.NodeReclaim; nr != nil {
		sr.SummaryCalls = 2
		for _, a := range nr.Actions {
			switch a {
			case decision.ContainerGC:
				sr.ContainerGC++
			case decision.ImageGC:
				sr.ImageGC++
			}
		}
	}
	setConditions(&sr, conds, probes)
	return sr
}

func setConditions(sr *StepResult, conds []signal.NodeCondition, probes []v1.Pod) {
	sr.MemoryPressure, sr.DiskPressure, sr.PIDPressure = false, false, false
	for _, c := range conds {
		switch c {
		case signal.MemoryPressure:
			sr.MemoryPressure = true
		case signal.DiskPressure:
			sr.DiskPressure = true
		case signal.PIDPressure:
			sr.PIDPressure = true
		}
	}
	sr.Admissions = nil
	for i := range probes {
		ok, msg := decision.Admit(conds, kubeconv.Candidate(apiView(&probes[i]), nil))
		a := Admission{Name: probes[i].Name, Admit: ok, Message: msg}
		if !ok {
			a.Reason = decision.Reason
		}
		sr.Admissions = append(sr.Admissions, a)
	}
}

func nonEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// normalize removes what the kubelet leaves to map order: the order of the conditions in the
// admission message ("The node had condition: [A B]. ").
func normalize(sr StepResult) StepResult {
	out := sr
	out.Admissions = nil
	for _, a := range sr.Admissions {
		if i, j := strings.Index(a.Message, "["), strings.Index(a.Message, "]"); i >= 0 && j > i {
			parts := strings.Fields(a.Message[i+1 : j])
			sort.Strings(parts)
			a.Message = a.Message[:i+1] + strings.Join(parts, " ") + a.Message[j:]
		}
		out.Admissions = append(out.Admissions, a)
	}
	return out
}

// variant is one answer the kubelet could have given, with the input that makes our core give it.
type variant struct {
	in decision.Input
	d  decision.Decision
}

// thresholdVariants returns our answers for every other acted-on threshold the kubelet may have
// handled first (any memory one when a memory threshold is acted on, else any): the other acted-on
// thresholds are made inert so that our core picks that one. Conditions and admission do not depend
// on the choice and are taken from the real step.
func thresholdVariants(st decision.State, in decision.Input, after *signal.Snapshot, d decision.Decision) []variant {
	if len(d.Acted) < 2 {
		return nil
	}
	memory := false
	for _, id := range d.Acted {
		memory = memory || in.Config.Thresholds[id].Signal.IsMemory()
	}
	var out []variant
	for _, x := range d.Acted[1:] {
		if memory && !in.Config.Thresholds[x].Signal.IsMemory() {
			continue
		}
		alt := in
		alt.Config.Thresholds = append([]threshold.Threshold{}, in.Config.Thresholds...)
		for _, id := range d.Acted {
			if id != x {
				alt.Config.Thresholds[id].Operator = ""
			}
		}
		// Node-level reclaim succeeds only when no configured threshold is met after it, including
		// the ones made inert here. When some is, hand the alternative the pre-reclaim snapshot, on
		// which x itself is still met (with min-reclaim), so reclaim fails there too.
		altAfter := after
		if metAfterReclaim(in.Config, after) {
			altAfter = &in.Snapshot
		}
		_, ad := ourStep(st, alt, altAfter)
		out = append(out, variant{alt, ad})
	}
	return out
}

// metAfterReclaim reports whether any configured threshold is met, with min-reclaim, on after.
func metAfterReclaim(cfg threshold.Config, after *signal.Snapshot) bool {
	for _, t := range cfg.Thresholds {
		if o, ok := after.Observations[t.Signal]; ok && !t.Inert() && threshold.Met(t, o, true) {
			return true
		}
	}
	return false
}

// tieVariant returns our decision with the pressure victim replaced by kubeletVictim when both tie
// on every kubelet ranking key (only tie-breaker steps between them in our ranking): the kubelet's
// sort.Sort is unstable beyond 12 pods.
func tieVariant(st decision.State, in decision.Input, d decision.Decision, kubeletVictim string) (decision.Decision, bool) {
	if d.Ranking == nil || len(d.Evictions) != 1 || d.Evictions[0].Path != decision.PathPressure {
		return d, false
	}
	pos := map[string]int{}
	for i, e := range d.Ranking.Entries {
		pos[e.Candidate.UID] = i
	}
	a, okA := pos[d.Evictions[0].UID]
	b, okB := pos[kubeletVictim]
	if !okA || !okB || a == b {
		return d, false
	}
	if a > b {
		a, b = b, a
	}
	for i := a; i < b; i++ {
		switch d.Ranking.Steps[i].Key {
		case rank.KeyTieName, rank.KeyTieUID, rank.KeyTieInput:
		default:
			return d, false
		}
	}
	p := decision.PredictOrder(st, in, decision.PredictOptions{})
	for _, o := range p.Order {
		if o.Eviction.UID == kubeletVictim && !o.Critical {
			alt := d
			ev := o.Eviction
			if ev.Signal != d.Evictions[0].Signal {
				return d, false
			}
			alt.Evictions = []decision.Eviction{ev}
			return alt, true
		}
	}
	return d, false
}

// comparePrediction checks the local-storage group of decision.PredictOrder (what explain lists first)
// against the kubelet's step: the pods it evicted without a DisruptionTarget condition (the
// local-storage path), in its order (the case's pod order is its active-pod order), with their messages.
// When the kubelet evicted for pressure, or nothing, the predicted group must be empty.
func comparePrediction(st decision.State, in decision.Input, k StepResult, tl *tally) string {
	p := decision.PredictOrder(st, in, decision.PredictOptions{})
	var want, got []string
	for _, e := range k.Evictions {
		if e.Condition == nil {
			want = append(want, e.UID+" "+e.Message)
		}
	}
	for _, e := range p.LocalStorage {
		got = append(got, e.UID+" "+e.Message)
	}
	tl.predictedLocal += len(got)
	tl.localRefused += len(p.LocalStorageRefused)
	return cmp.Diff(want, got)
}

func TestComparePredictionReportsADifferentGroup(t *testing.T) {
	limit := resource.MustParse("1Mi")
	pod := v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}, Volumes: []v1.Volume{{Name: "v",
			VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{SizeLimit: &limit}}}}}}
	sum := &statsapi.Summary{Pods: []statsapi.PodStats{{PodRef: statsapi.PodReference{Name: "p", Namespace: "default", UID: "uid-p"},
		VolumeStats: []statsapi.VolumeStats{{Name: "v", FsStats: statsapi.FsStats{UsedBytes: u64(2 << 20)}}}}}}
	snap := kubeconv.Snapshot(sum)
	in := decision.Input{Snapshot: snap, Candidates: []rank.Candidate{kubeconv.Candidate(&pod, snap.Pods)}}
	evicted := StepResult{Evictions: []Eviction{{UID: "uid-p", Message: `Usage of EmptyDir volume "v" exceeds the limit "1Mi". `}}}
	if diff := comparePrediction(decision.State{}, in, evicted, &tally{}); diff != "" {
		t.Errorf("the kubelet's own answer is reported as different:\n%s", diff)
	}
	for name, k := range map[string]StepResult{
		"no eviction":       {},
		"another message":   {Evictions: []Eviction{{UID: "uid-p", Message: "x"}}},
		"a pressure victim": {Evictions: []Eviction{{UID: "uid-p", Message: "y", Condition: &Condition{Type: "DisruptionTarget"}}}},
	} {
		if comparePrediction(decision.State{}, in, k, &tally{}) == "" {
			t.Errorf("%s: the predicted group went unnoticed", name)
		}
	}
}
