package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kube-pressure/pressure/internal/golden"
)

// runCLI runs kubectl-pressure in-process and returns stdout and the error.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := runCLIStderr(t, args...)
	return out, err
}

// runCLIStderr is runCLI that also returns stderr.
func runCLIStderr(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	err := Run(context.Background(), streams, args)
	return out.String(), errOut.String(), err
}

func TestExplainSnapshotMatchesGolden(t *testing.T) {
	for _, c := range []string{"seed", "healthy", "soft-and-disk", "local-storage", "local-storage-only"} {
		for _, format := range []string{"text", "json", "yaml"} {
			t.Run(c+"/"+format, func(t *testing.T) {
				got, err := runCLI(t, "explain", "--snapshot", filepath.Join("testdata", "snapshots", c), "-o", format)
				if err != nil {
					t.Fatalf("explain: %v", err)
				}
				ext := map[string]string{"text": "txt", "json": "json", "yaml": "yaml"}[format]
				path := filepath.Join("testdata", "golden", c+"."+ext)
				golden.Check(t, path, got)
			})
		}
	}
}

// report is the part of the JSON output the behaviour tests read.
type report struct {
	Node        string            `json:"node"`
	Allocatable map[string]string `json:"allocatable"`
	Signals     []struct {
		Signal, Available, Capacity, Threshold string
		Met                                    bool
	} `json:"signals"`
	Kubelet struct {
		ThresholdsMet     []string `json:"thresholdsMet"`
		NodeConditions    []string `json:"nodeConditions"`
		ResourceToReclaim string   `json:"resourceToReclaim"`
		EvictionOrder     []struct {
			Pod, QOSClass, DecidedBy, Why, Message string
			Critical                               bool
			GracePeriodSeconds                     int64
		} `json:"evictionOrder"`
	} `json:"kubelet"`
	Warnings []string `json:"warnings"`
}

func explainJSON(t *testing.T, dir string) report {
	t.Helper()
	out, err := runCLI(t, "explain", "--snapshot", dir, "-o", "json")
	if err != nil {
		t.Fatalf("explain --snapshot %s: %v", dir, err)
	}
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return r
}

func TestSeedCaseEvictsBurstablePodAboveRequestBeforeBestEffort(t *testing.T) {
	r := explainJSON(t, filepath.Join("testdata", "snapshots", "seed"))
	var order []string
	for _, v := range r.Kubelet.EvictionOrder {
		order = append(order, v.Pod)
	}
	if diff := cmp.Diff([]string{"default/a", "default/b", "default/c"}, order); diff != "" {
		t.Errorf("eviction order (-want +got):\n%s", diff)
	}
	if got, want := r.Allocatable["memory"], "13883146240"; got != want { // 16002Mi − 2662Mi − 100Mi = 13240Mi
		t.Errorf("allocatable memory = %s, want %s", got, want)
	}
	if diff := cmp.Diff([]string{"memory.available"}, r.Kubelet.ThresholdsMet); diff != "" {
		t.Errorf("thresholdsMet (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"MemoryPressure"}, r.Kubelet.NodeConditions); diff != "" {
		t.Errorf("nodeConditions (-want +got):\n%s", diff)
	}
	if len(order) != 3 {
		t.Fatalf("got %d pods, want 3", len(order))
	}
	a := r.Kubelet.EvictionOrder[0]
	wantMsg := "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. " +
		"Container a was using 2Gi, request is 100Mi, has larger consumption of memory. "
	if a.Message != wantMsg {
		t.Errorf("first victim message = %q, want %q", a.Message, wantMsg)
	}
	if a.GracePeriodSeconds != 1 {
		t.Errorf("first victim grace = %d, want 1 (hard threshold)", a.GracePeriodSeconds)
	}
	if a.DecidedBy != "usage above request" || !strings.Contains(a.Why, "1.9Gi above its request") ||
		!strings.Contains(a.Why, "QoS class is not a ranking key") {
		t.Errorf("why A before B = %q by %q, want the usage-above-request key with both excesses and the QoS remark", a.Why, a.DecidedBy)
	}
	if b := r.Kubelet.EvictionOrder[1]; b.DecidedBy != "exceeds request" {
		t.Errorf("B before C decided by %q, want exceeds request", b.DecidedBy)
	}
}

func TestSnapshotWithoutMetThresholdPredictsNothing(t *testing.T) {
	r := explainJSON(t, filepath.Join("testdata", "snapshots", "healthy"))
	if len(r.Kubelet.ThresholdsMet) != 0 || len(r.Kubelet.EvictionOrder) != 0 || r.Kubelet.ResourceToReclaim != "" {
		t.Errorf("kubelet = %+v, want empty when no threshold is met", r.Kubelet)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "summary.json: pods: no stats for pod default/fresh") {
		t.Errorf("warnings = %q, want one naming summary.json and the pod without stats", r.Warnings)
	}
}

func TestSoftThresholdActsAsIfGracePassedAndCriticalPodIsNeverEvicted(t *testing.T) {
	r := explainJSON(t, filepath.Join("testdata", "snapshots", "soft-and-disk"))
	if r.Kubelet.ResourceToReclaim != "memory" {
		t.Errorf("resource = %q, want memory (memory before disk)", r.Kubelet.ResourceToReclaim)
	}
	var critical []string
	for _, v := range r.Kubelet.EvictionOrder {
		if v.Critical {
			critical = append(critical, v.Pod)
			if v.Message != "" {
				t.Errorf("critical pod %s has an eviction message %q", v.Pod, v.Message)
			}
		}
	}
	if diff := cmp.Diff([]string{"kube-system/node-agent"}, critical); diff != "" {
		t.Errorf("critical pods (-want +got):\n%s", diff)
	}
	first := r.Kubelet.EvictionOrder[0]
	if first.Pod != "apps/cache" || first.GracePeriodSeconds != 60 {
		t.Errorf("first victim = %s grace %d, want apps/cache grace 60 (min(evictionMaxPodGracePeriod 60, TGPS 120))",
			first.Pod, first.GracePeriodSeconds)
	}
}
