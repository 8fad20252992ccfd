package e2e

// `kubectl pressure explain --local` on the package's real node, with its pods listed from the cluster.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kube-pressure/pressure/internal/cli"
)

// explainLocalRanksThePods runs `kubectl pressure explain --local` on the node with a config whose soft
// allocatableMemory threshold (1900Mi of the 2Gi pods cgroup) the pods meet, so the eviction order of
// the pods listed from the cluster, ranked with the working sets read from their cgroups, is printed.
func explainLocalRanksThePods(ctx context.Context, t *testing.T, e *env, ns string) {
	memTotal, err := memTotalBytes()
	if err != nil {
		t.Fatal(err)
	}
	kubeReserved := resource.NewQuantity(memTotal-podsLimitBytes, resource.BinarySI) // as TestMain configures the node
	cfg := filepath.Join(t.TempDir(), "kubelet-config.yaml")
	yaml := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n" +
		"kubeReserved: {memory: " + kubeReserved.String() + "}\n" +
		"evictionHard: {memory.available: 100Mi}\n" +
		"evictionSoft: {allocatableMemory.available: 1900Mi}\nevictionSoftGracePeriod: {allocatableMemory.available: 30s}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	err = cli.Run(ctx, streams, []string{"--kubeconfig", e.cp.Kubeconfig(), "explain", "--local", "--node-name", e.node.Name(),
		"--kubelet-config", cfg, "--kubelet-root-dir", e.node.KubeletRootDir(),
		"--runtime-root", filepath.Join(e.node.Cleanup().Dir, "containerd", "root"), "-o", "json"})
	if err != nil {
		t.Fatalf("explain --local: %v: %s", err, errOut.String())
	}
	var r struct {
		Kubelet struct {
			ThresholdsMet []string `json:"thresholdsMet"`
			EvictionOrder []struct {
				Pod      string `json:"pod"`
				HasStats bool   `json:"hasStats"`
				Usage    string `json:"usage"`
			} `json:"evictionOrder"`
		} `json:"kubelet"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("explain --local output is not JSON: %v\n%s", err, out.String())
	}
	t.Logf("explain --local: thresholds met %q, order %+v, warnings %q", r.Kubelet.ThresholdsMet, r.Kubelet.EvictionOrder, r.Warnings)
	var order []string
	for _, v := range r.Kubelet.EvictionOrder {
		order = append(order, v.Pod)
		if !v.HasStats || v.Usage == "" {
			t.Errorf("pod %s: hasStats %t usage %q, want the working set read from its cgroup", v.Pod, v.HasStats, v.Usage)
		}
	}
	// Both BestEffort (212Mi over a 0 request) and Burstable (~123Mi over 100Mi) exceed their requests,
	// the larger excess first; the Guaranteed pod (150Mi of 300Mi) does not.
	want := []string{ns + "/besteffort", ns + "/burstable", ns + "/guaranteed"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("explain --local eviction order (-want +got):\n%s", diff)
	}
}
