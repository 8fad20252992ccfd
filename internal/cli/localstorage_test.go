package cli

// explain reads localStorageCapacityIsolation from the kubelet configuration: from a snapshot's
// kubelet-config.json (a bare KubeletConfiguration or /configz output) here, live from /configz on a
// real kube-apiserver's node proxy below, and --local from --kubelet-config in localconfig_linux_test.go.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// localReport is the part of the JSON report the local-storage tests read.
type localReport struct {
	Kubelet struct {
		LocalStorageCapacityIsolation bool     `json:"localStorageCapacityIsolation"`
		ThresholdsMet                 []string `json:"thresholdsMet"`
		EvictionOrder                 []struct {
			Pod, Path, Message string
			LocalStorage       *struct{ Check, EvictionSignal, Name, Used, Limit string }
		} `json:"evictionOrder"`
		Notes []string `json:"notes"`
	} `json:"kubelet"`
	Warnings []string `json:"warnings"`
}

func parseLocalReport(t *testing.T, out string) localReport {
	t.Helper()
	var r localReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("explain -o json: %v\n%s", err, out)
	}
	return r
}

// checkUploader checks the report of the local-storage-only snapshot: the uploader's emptyDir is one
// byte over its 500M sizeLimit and no threshold is met.
func checkUploader(t *testing.T, r localReport, isolation bool) {
	t.Helper()
	k := r.Kubelet
	if k.LocalStorageCapacityIsolation != isolation {
		t.Errorf("localStorageCapacityIsolation = %v, want %v", k.LocalStorageCapacityIsolation, isolation)
	}
	if len(k.ThresholdsMet) != 0 {
		t.Errorf("thresholds met %v, want none", k.ThresholdsMet)
	}
	if !isolation {
		if len(k.EvictionOrder) != 0 {
			t.Errorf("eviction order %+v, want none with isolation off", k.EvictionOrder)
		}
		if !containsLine(k.Notes, "localStorageCapacityIsolation is false: the kubelet enforces no emptyDir sizeLimit") {
			t.Errorf("notes %q do not say that isolation is off", k.Notes)
		}
		return
	}
	if len(k.EvictionOrder) != 1 {
		t.Fatalf("eviction order %+v, want the uploader alone", k.EvictionOrder)
	}
	v := k.EvictionOrder[0]
	l := v.LocalStorage
	if v.Pod != "default/uploader" || v.Path != "local-storage" || l == nil || l.Check != "emptyDir" || l.Name != "spool" ||
		l.EvictionSignal != "emptydirfs.limit" || l.Used != "500000001" || l.Limit != "500000000" ||
		v.Message != `Usage of EmptyDir volume "spool" exceeds the limit "500M". ` {
		t.Errorf("victim %+v (limit %+v), want the uploader over its emptyDir spool", v, l)
	}
}

func TestExplainSnapshotReadsLocalStorageCapacityIsolation(t *testing.T) {
	src := filepath.Join("testdata", "snapshots", "local-storage-only")
	kind := `"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1"`
	for _, tc := range []struct {
		name, config string
		isolation    bool
	}{
		{"a config file without the field: the default, on", `{` + kind + `}`, true},
		{"a config file turning it off", `{` + kind + `, "localStorageCapacityIsolation": false}`, false},
		{"/configz turning it off", `{"kubeletconfig": {"localStorageCapacityIsolation": false}}`, false},
		{"/configz with it on", `{"kubeletconfig": {"localStorageCapacityIsolation": true}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range snapshotFiles {
				data := []byte(readFile(t, filepath.Join(src, f)))
				if f == FileKubeletConfig {
					data = []byte(tc.config)
				}
				if err := os.WriteFile(filepath.Join(dir, f), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			out, err := runCLI(t, "explain", "--snapshot", dir, "-o", "json")
			if err != nil {
				t.Fatalf("explain: %v", err)
			}
			checkUploader(t, parseLocalReport(t, out), tc.isolation)
		})
	}
}

func TestLiveExplainReadsLocalStorageCapacityIsolationFromConfigz(t *testing.T) {
	cp, cs, ctx := controlPlane(t, 2*time.Minute)
	const node = "quiet-node"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "uploader", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "uploader", Image: "pressure.local/pause:v1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}}},
			Volumes: []corev1.Volume{{Name: "spool", VolumeSource: corev1.VolumeSource{
				EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptrQuantity("500M")}}}}}}
	got, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The snapshot's Summary, with the uid the apiserver gave the pod.
	summary := strings.ReplaceAll(readFile(t, filepath.Join("testdata", "snapshots", "local-storage-only", FileSummary)),
		`"uid-uploader"`, fmt.Sprintf("%q", got.UID))
	var isolation atomic.Bool
	ip, port := clustertest.KubeletServer(t, cp, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stats/summary":
			_, _ = w.Write([]byte(summary))
		case "/configz":
			fmt.Fprintf(w, `{"kubeletconfig":{"evictionHard":{"memory.available":"100Mi"},"localStorageCapacityIsolation":%v}}`,
				isolation.Load())
		default:
			http.NotFound(w, r)
		}
	}))
	createNode(ctx, t, cs, node, ip, port)
	for _, on := range []bool{true, false} {
		isolation.Store(on)
		out, err := runCLIWithin(t, time.Minute, "--kubeconfig", cp.Kubeconfig(), "explain", node, "-o", "json")
		if err != nil {
			t.Fatalf("explain %s (isolation %v): %v", node, on, err)
		}
		checkUploader(t, parseLocalReport(t, out), on)
	}
}

func ptrQuantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}
