package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// podsAs re-encodes the seed's pods.json: "list" as `kubectl get pods -o json` writes it, "array" as
// a bare JSON array of its items.
func podsAs(t *testing.T, f map[string]string, form string) {
	t.Helper()
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal([]byte(f[FilePods]), &list); err != nil {
		t.Fatal(err)
	}
	var v any = list.Items
	if form == "list" {
		v = map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""},
			"items": list.Items}
	}
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	f[FilePods] = string(b)
}

func TestPodsFileAcceptsWhatKubectlWrites(t *testing.T) {
	for _, form := range []string{"list", "array"} {
		t.Run(form, func(t *testing.T) {
			dir := copySeed(t, func(f map[string]string) { podsAs(t, f, form) })
			r := explainJSON(t, dir)
			var order []string
			for _, v := range r.Kubelet.EvictionOrder {
				order = append(order, v.Pod)
			}
			if diff := cmp.Diff([]string{"default/a", "default/b", "default/c"}, order); diff != "" {
				t.Errorf("eviction order from a %s of pods (-want +got):\n%s", form, diff)
			}
		})
	}
}

func TestWrongAnswersBecomeErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(t *testing.T, f map[string]string)
		extra []string
		want  []string // substrings of the error
	}{
		{"an empty object as pods.json is an error",
			func(t *testing.T, f map[string]string) { f[FilePods] = "{}" }, nil,
			[]string{"pods.json: no kind and no items"}},
		{"a List holding something else than pods names the item",
			func(t *testing.T, f map[string]string) {
				podsAs(t, f, "list")
				replace(t, f, FilePods, `"metadata": {`, `"kind": "Service", "metadata": {`)
			}, nil,
			[]string{"pods.json: field items[0].kind", `"Service", want a v1 Pod`}},
		{"two pods with one uid name both",
			func(t *testing.T, f map[string]string) { replace(t, f, FilePods, `"uid": "uid-b"`, `"uid": "uid-a"`) }, nil,
			[]string{"pods.json: field items[1].metadata.uid", `"uid-a" is also the uid of items[0] (pod default/a)`}},
		{"a node capacity beyond int64 is an error naming the value",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileNode, `"memory": "16386048Ki"`, `"memory": "99999999Ei"`)
			}, nil,
			[]string{"node.json: field status.capacity.memory", "99999999Ei is out of range"}},
		{"a node capacity of 1e30 is an error, not 0",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileNode, `"memory": "16386048Ki"`, `"memory": "1e30"`)
			}, nil,
			[]string{"node.json: field status.capacity.memory", "1e30 is out of range"}},
		{"a negative capacity is an error",
			func(t *testing.T, f map[string]string) { replace(t, f, FileNode, `"cpu": "4"`, `"cpu": "-4"`) }, nil,
			[]string{"node.json: field status.capacity.cpu", "-4 is out of range"}},
		{"a --local flag with --snapshot is an error",
			func(*testing.T, map[string]string) {}, []string{"--kubelet-config", "/etc/kubelet.yaml"},
			[]string{`--kubelet-config "/etc/kubelet.yaml": only --local reads it`}},
		{"--proc-root with --snapshot is an error",
			func(*testing.T, map[string]string) {}, []string{"--proc-root", "/host/proc"},
			[]string{`--proc-root "/host/proc": only --local reads it`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copySeed(t, func(f map[string]string) { tc.edit(t, f) })
			_, err := runCLI(t, append([]string{"explain", "--snapshot", dir}, tc.extra...)...)
			if err == nil {
				t.Fatalf("explain succeeded, want an error containing %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestDoubtfulInputsBecomeWarnings(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, f map[string]string)
		want string // substring of one warning; the snapshot dir is prepended when it starts with a file name
	}{
		{"available bytes of 2^64-1 say the kubelet reads -1",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileSummary, `"availableBytes": 52428800`, `"availableBytes": 18446744073709551615`)
			},
			"summary.json: field node.memory.availableBytes: 18446744073709551615 does not fit an int64: the kubelet reads it as -1"},
		{"an unknown kubelet config field is named",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileKubeletConfig, `"cgroupDriver": "cgroupfs"`, `"cgroupDriver": "cgroupfs", "evictionHrad": {}`)
			},
			`kubelet-config.json: unknown field "evictionHrad": ignored`},
		{"a kubelet older than the oldest supported one warns and follows 1.34",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileNode, `"kubeletVersion": "v1.36.3"`, `"kubeletVersion": "v1.31.2"`)
			},
			`node.json: status.nodeInfo.kubeletVersion: kubelet version "v1.31.2": older than 1.34, ` +
				`the oldest supported: using kubelet 1.34 semantics`},
		{"a node without a kubelet version warns and follows 1.36",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileNode, `"kubeletVersion": "v1.36.3"`, `"kubeletVersion": ""`)
			},
			`node.json: status.nodeInfo.kubeletVersion: kubelet version unknown: using kubelet 1.37 semantics`},
		{"two pod stats with one uid",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileSummary, `"uid": "uid-b"`, `"uid": "uid-a"`)
			},
			`summary.json: field pods[1].podRef.uid: "uid-a" is also the uid of pods[0]: the kubelet keeps the later stats`},
		{"a kube-reserved of 1e30 is named, not read as 0",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileKubeletConfig, `"memory": "2662Mi"`, `"memory": "1e30"`)
			},
			"kubelet-config.json: field kubeletconfig.kubeReserved.memory: 1e30 does not fit an int64: counted as 9223372036854775807"},
		{"a kube-reserved of 1e30 makes the kubelet refuse to start",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileKubeletConfig, `"memory": "2662Mi"`, `"memory": "1e30"`)
			},
			"node allocatable: the kubelet would refuse to start"},
		{"a kube-reserved of 99999999Ei makes the kubelet refuse to start, not an overflow",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileKubeletConfig, `"memory": "2662Mi"`, `"memory": "99999999Ei"`)
			},
			"node allocatable: the kubelet would refuse to start"},
		{"a hard threshold of 1e30 is named",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileKubeletConfig, `"memory.available": "100Mi"`, `"memory.available": "1e30"`)
			},
			"kubelet-config.json: field kubeletconfig.evictionHard.memory.available: 1e30 does not fit an int64"},
		{"a pod request of 99999999Ei is named",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FilePods, `"memory": "100Mi"`, `"memory": "99999999Ei"`)
			},
			"pods.json: field items[0].spec.containers[0].resources.requests.memory: 99999999Ei does not fit an int64"},
		{"a cpu limit beyond int64 millicores is named",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FilePods, `"memory": "2500Mi"`, `"memory": "2500Mi", "cpu": "9223372036854776"`)
			},
			"pods.json: field items[0].spec.containers[0].resources.limits.cpu: 9223372036854776 does not fit an int64 (in millicores)"},
		{"a threshold above the capacity is always met, not a negative percentage",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileKubeletConfig, `"memory.available": "100Mi"`, `"memory.available": "99999999Ei"`)
			},
			"kubelet config: memory.available<9223372036854775807 is always met: its threshold 8.0Ei is above the observed capacity 15.6Gi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copySeed(t, func(f map[string]string) { tc.edit(t, f) })
			r := explainJSON(t, dir)
			want := tc.want
			if file, _, _ := strings.Cut(want, ":"); strings.HasSuffix(file, ".json") {
				want = filepath.Join(dir, want)
			}
			found := false
			for _, w := range r.Warnings {
				found = found || strings.Contains(w, want)
			}
			if !found {
				t.Errorf("warnings %q, want one containing %q", r.Warnings, want)
			}
		})
	}
}

func TestSeedSnapshotHasNoWarnings(t *testing.T) {
	if r := explainJSON(t, filepath.Join("testdata", "snapshots", "seed")); len(r.Warnings) != 0 {
		t.Errorf("warnings %q, want none for a clean snapshot", r.Warnings)
	}
}
