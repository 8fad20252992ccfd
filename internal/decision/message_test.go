package decision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// evictOne runs one step under hard memory.available<100Mi (pods not enforced) with 50Mi available and
// returns the eviction of the only candidate.
func evictOne(t *testing.T, c rank.Candidate) Eviction {
	t.Helper()
	_, d := Step(State{}, Input{Now: at(0), Snapshot: memObs(52428800, 16*gi, at(0)),
		Candidates: []rank.Candidate{c}, Config: hard(t, "memory.available", "100Mi")})
	if len(d.Evictions) != 1 {
		t.Fatalf("evictions = %v, want one\n%s", evictedNames(d), d.Trace)
	}
	return d.Evictions[0]
}

func TestPressureEvictionMessages(t *testing.T) {
	guaranteed := memPod("c", gi, 900*mi)
	typo := memPod("t", 1, 1) // memory: 500m, half a byte, the common typo for 500Mi: 1 byte exceeds it
	typo.Containers[0].MemoryRequest = rank.Amount{Value: 1, Fraction: "500m"}
	tests := []struct {
		name            string
		pod             rank.Candidate
		wantMessage     string
		wantAnnotations map[string]string
	}{
		{
			name:        "M1 burstable container above request is named with usage and request",
			pod:         memPod("a", 100*mi, 2*gi),
			wantMessage: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container a was using 2Gi, request is 100Mi, has larger consumption of memory. ",
			wantAnnotations: map[string]string{"offending_containers": "a", "offending_containers_usage": "2Gi",
				"starved_resource": "memory"},
		},
		{
			name:        "M2 best-effort container prints request 0",
			pod:         memPod("b", 0, 300*mi),
			wantMessage: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container b was using 300Mi, request is 0, has larger consumption of memory. ",
			wantAnnotations: map[string]string{"offending_containers": "b", "offending_containers_usage": "300Mi",
				"starved_resource": "memory"},
		},
		{
			name:        "M3 pod under request stops after the threshold segment with empty offender lists",
			pod:         guaranteed,
			wantMessage: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. ",
			wantAnnotations: map[string]string{"offending_containers": "", "offending_containers_usage": "",
				"starved_resource": "memory"},
		},
		{
			name:        "a fractional request is printed and compared exactly",
			pod:         typo,
			wantMessage: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container t was using 1, request is 500m, has larger consumption of memory. ",
			wantAnnotations: map[string]string{"offending_containers": "t", "offending_containers_usage": "1",
				"starved_resource": "memory"},
		},
		{
			name:            "pod without stats gets no container segment and no annotations",
			pod:             rank.Candidate{UID: "n", Namespace: "default", Name: "n"},
			wantMessage:     "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. ",
			wantAnnotations: map[string]string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := evictOne(t, tc.pod)
			if e.Message != tc.wantMessage {
				t.Errorf("message = %q, want %q", e.Message, tc.wantMessage)
			}
			if diff := cmp.Diff(e.Annotations, tc.wantAnnotations); diff != "" {
				t.Errorf("annotations (-got +want):\n%s", diff)
			}
		})
	}
}

func TestM1EvictionResultFields(t *testing.T) {
	e := evictOne(t, memPod("a", 100*mi, 2*gi))
	want := Eviction{UID: "uid-a", Namespace: "default", Name: "a", Path: PathPressure, Threshold: 0,
		Signal: signal.MemoryAvailable, MetricLabel: "memory.available", Message: e.Message, Annotations: e.Annotations,
		Grace:     Grace{Override: 1, Effective: 1, KillTimeoutSeconds: 10},
		Condition: &PodCondition{Type: "DisruptionTarget", Status: "True", Reason: "TerminationByKubelet", Message: e.Message}}
	if diff := cmp.Diff(e, want); diff != "" {
		t.Errorf("eviction (-got +want):\n%s", diff)
	}
}

func TestM4M5ThresholdQuantityPrinting(t *testing.T) {
	tests := []struct {
		name string
		cfg  threshold.Config
		sig  signal.Signal
		obs  signal.Observation
		want string
	}{
		{"M4 1.5Gi prints in canonical form", hard(t, "memory.available", "1.5Gi"), signal.MemoryAvailable,
			signal.Observation{Available: gi, Capacity: 16 * gi, Time: at(0)},
			"The node was low on resource: memory. Threshold quantity: 1536Mi, available: 1Gi. "},
		{"M4 float32 percentage of 10Gi prints plainly", hard(t, "nodefs.available", "10%"), signal.NodeFsAvailable,
			signal.Observation{Available: mi, Capacity: 10 * gi, Time: at(0)},
			"The node was low on resource: ephemeral-storage. Threshold quantity: 1073741840, available: 1Mi. "},
		{"M5 inode percentage prints BinarySI and available DecimalSI", hard(t, "nodefs.inodesFree", "5%"), signal.NodeFsInodesFree,
			signal.Observation{Available: 300000, Capacity: 6553600, Time: at(0)},
			"The node was low on resource: inodes. Threshold quantity: 320Ki, available: 300k. "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(map[signal.Signal]signal.Observation{tc.sig: tc.obs})
			noStats := rank.Candidate{UID: "n", Namespace: "default", Name: "n"}
			// a successful-looking "after reclaim" that still meets the threshold, so disk evicts
			_, d := Step(State{}, Input{Now: at(0), Snapshot: s, Candidates: []rank.Candidate{noStats}, Config: tc.cfg, AfterReclaim: &s})
			if len(d.Evictions) != 1 {
				t.Fatalf("evictions = %v\n%s", evictedNames(d), d.Trace)
			}
			if got := d.Evictions[0].Message; got != tc.want {
				t.Errorf("message = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestKillGrace(t *testing.T) {
	soft := func(max int32) threshold.Config {
		cfg := softMemory(t)
		cfg.MaxPodGracePeriodSeconds = max
		return cfg
	}
	withTGPS := func(v int64) rank.Candidate {
		c := memPod("a", 0, gi)
		c.TerminationGracePeriodSeconds = rank.Int64(v)
		return c
	}
	tests := []struct {
		name string
		cfg  threshold.Config
		pod  rank.Candidate
		want Grace
	}{
		{"K1 hard threshold overrides to 1 s", hard(t, "memory.available", "100Mi"), withTGPS(30), Grace{1, 1, 10}},
		{"K2 soft with max 60 uses the shorter pod grace of 30 s", soft(60), withTGPS(30), Grace{30, 30, 45}},
		{"K2 soft with max 60 caps a pod grace of 120 s", soft(60), withTGPS(120), Grace{60, 60, 90}},
		{"K2 soft with the default max 0 passes override 0, which the pod worker clamps to 1 s", soft(0), withTGPS(30), Grace{0, 1, 10}},
		{"K2 soft with max -1 does not defer to the pod: clamped to 1 s", soft(-1), withTGPS(30), Grace{-1, 1, 10}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now := at(0)
			if !tc.cfg.Thresholds[0].IsHard() {
				now = at(90)
			}
			st, _ := Step(State{}, Input{Now: at(0), Snapshot: memObs(50*mi, 16*gi, at(0)), Config: tc.cfg})
			_, d := Step(st, Input{Now: now, Snapshot: memObs(50*mi, 16*gi, now.Add(time.Second)),
				Candidates: []rank.Candidate{tc.pod}, Config: tc.cfg})
			if len(d.Evictions) != 1 {
				t.Fatalf("evictions = %v\n%s", evictedNames(d), d.Trace)
			}
			if diff := cmp.Diff(d.Evictions[0].Grace, tc.want); diff != "" {
				t.Errorf("grace (-got +want):\n%s", diff)
			}
		})
	}
}

func TestPodLevelResourcesAddAPodSegmentWithoutComparingUsage(t *testing.T) {
	c := memPod("a", 100*mi, 2*gi)
	c.PodLevelResources = true
	c.PodLevelMemoryRequest = &rank.Amount{Value: 4 * gi}
	e := evictOne(t, c)
	want := "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Pod a was using 2Gi, request is 4Gi, has larger consumption of memory. Container a was using 2Gi, request is 100Mi, has larger consumption of memory. "
	if e.Message != want {
		t.Errorf("message = %q, want %q", e.Message, want)
	}
	if got, want := e.Annotations[AnnotationOffendingPod]+" "+e.Annotations[AnnotationOffendingPodUsage], "a 2Gi"; got != want {
		t.Errorf("offending pod annotations = %q, want %q", got, want)
	}
}

func TestStateFromAnotherConfigIsIgnoredNotFatal(t *testing.T) {
	st := State{ThresholdsMet: []ThresholdID{7, -1}}
	_, d := Step(st, Input{Now: at(0), Snapshot: memObs(50*mi, 16*gi, at(0)), Candidates: r1Pods(),
		Config: hard(t, "memory.available", "100Mi")})
	if diff := cmp.Diff(evictedNames(d), []string{"a"}); diff != "" {
		t.Errorf("evicted (-got +want):\n%s", diff)
	}
}
