package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// editPod applies edit to the pod named name in the snapshot's pods.json.
func editPod(t *testing.T, files map[string]string, name string, edit func(spec map[string]any)) {
	t.Helper()
	var list map[string]any
	if err := json.Unmarshal([]byte(files[FilePods]), &list); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, it := range list["items"].([]any) {
		pod := it.(map[string]any)
		if pod["metadata"].(map[string]any)["name"] == name {
			edit(pod["spec"].(map[string]any))
			found = true
		}
	}
	if !found {
		t.Fatalf("pods.json has no pod %q", name)
	}
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	files[FilePods] = string(b)
}

// sidecarSnapshot is the local-storage snapshot where default/logs-writer's "side" container is a
// sidecar (restartable init container) writing 10Mi of logs against a 5Mi ephemeral-storage limit, and
// "app" has a limit it does not reach.
func sidecarSnapshot(t *testing.T, version string) string {
	return copyCase(t, "local-storage", func(f map[string]string) {
		replace(t, f, FileNode, `"kubeletVersion": "v1.36.3"`, `"kubeletVersion": "`+version+`"`)
		editPod(t, f, "logs-writer", func(spec map[string]any) {
			cs := spec["containers"].([]any)
			app, side := cs[0].(map[string]any), cs[1].(map[string]any)
			app["resources"].(map[string]any)["limits"] = map[string]any{"ephemeral-storage": "100Gi"}
			side["resources"].(map[string]any)["limits"] = map[string]any{"ephemeral-storage": "5Mi"}
			side["restartPolicy"] = "Always"
			spec["containers"], spec["initContainers"] = []any{app}, []any{side}
		})
	})
}

// memoryEmptyDirSnapshot is the local-storage snapshot where default/scratch's emptyDir "cache", over
// its 1Gi sizeLimit, is memory-backed, on a kubelet of version with the gate set as gateOn.
func memoryEmptyDirSnapshot(t *testing.T, version string, gateOn bool) string {
	return copyCase(t, "local-storage", func(f map[string]string) {
		replace(t, f, FileNode, `"kubeletVersion": "v1.36.3"`, `"kubeletVersion": "`+version+`"`)
		if gateOn {
			replace(t, f, FileKubeletConfig, `"kubeletconfig": {`,
				`"kubeletconfig": {"featureGates": {"InPlacePodVerticalScalingMemoryBackedVolumes": true},`)
		}
		editPod(t, f, "scratch", func(spec map[string]any) {
			for _, v := range spec["volumes"].([]any) {
				if vol := v.(map[string]any); vol["name"] == "cache" {
					vol["emptyDir"].(map[string]any)["medium"] = "Memory"
				}
			}
		})
	})
}

// softGraceSnapshot is the soft-and-disk snapshot (soft memory.available, evictionMaxPodGracePeriod
// 60, jobs/batch with terminationGracePeriodSeconds 30) on a kubelet of version with
// AllowOverwriteTerminationGracePeriodSeconds set as gateOn.
func softGraceSnapshot(t *testing.T, version string, gateOn bool) string {
	return copyCase(t, "soft-and-disk", func(f map[string]string) {
		replace(t, f, FileNode, `"kubeletVersion": "v1.36.3"`, `"kubeletVersion": "`+version+`"`)
		if gateOn {
			replace(t, f, FileKubeletConfig, `"kubeletconfig": {`,
				`"kubeletconfig": {"featureGates": {"AllowOverwriteTerminationGracePeriodSeconds": true},`)
		}
	})
}

type explained struct {
	Warnings []string `json:"warnings"`
	Kubelet  struct {
		Semantics struct {
			Minor   int    `json:"minor"`
			Version string `json:"version"`
		} `json:"semantics"`
		EvictionOrder []struct {
			Pod                string `json:"pod"`
			Path               string `json:"path"`
			Message            string `json:"message"`
			GracePeriodSeconds int64  `json:"gracePeriodSeconds"`
		} `json:"evictionOrder"`
	} `json:"kubelet"`
}

func explainSemanticsJSON(t *testing.T, dir string, extra ...string) explained {
	t.Helper()
	out, err := runCLI(t, append([]string{"explain", "--snapshot", dir, "-o", "json"}, extra...)...)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	var r explained
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("explain -o json: %v", err)
	}
	return r
}

// victim returns the pod's entry of the predicted order: its path and message, its grace.
func (r explained) victim(t *testing.T, pod string) (string, string, int64) {
	t.Helper()
	for _, v := range r.Kubelet.EvictionOrder {
		if v.Pod == pod {
			return v.Path, v.Message, v.GracePeriodSeconds
		}
	}
	t.Fatalf("pod %s not in the predicted order %+v", pod, r.Kubelet.EvictionOrder)
	return "", "", 0
}

func TestExplainFollowsTheNodesKubeletVersion(t *testing.T) {
	const sidecarMsg = `Container side exceeded its local ephemeral storage limit "5Mi". `
	const emptyDirMsg = `Usage of EmptyDir volume "cache" exceeds the limit "1Gi". `
	tests := []struct {
		name     string
		dir      func(t *testing.T) string
		flags    []string
		pod      string
		wantPath string
		wantMsg  string // "" = not checked
		wantGr   int64  // 0 = not checked
		wantMin  int
	}{
		{"1.37 kubelet evicts a pod whose sidecar exceeds its ephemeral-storage limit",
			func(t *testing.T) string { return sidecarSnapshot(t, "v1.37.2") }, nil,
			"default/logs-writer", "local-storage", sidecarMsg, 0, 37},
		{"1.36 kubelet does not evict a pod whose sidecar exceeds its ephemeral-storage limit",
			func(t *testing.T) string { return sidecarSnapshot(t, "v1.36.3") }, nil,
			"default/logs-writer", "pressure", "", 0, 36},
		{"1.34 kubelet does not evict a pod whose sidecar exceeds its ephemeral-storage limit",
			func(t *testing.T) string { return sidecarSnapshot(t, "v1.34.4") }, nil,
			"default/logs-writer", "pressure", "", 0, 34},
		{"--kubelet-version v1.37.2 overrides the node's 1.36",
			func(t *testing.T) string { return sidecarSnapshot(t, "v1.36.3") }, []string{"--kubelet-version", "v1.37.2"},
			"default/logs-writer", "local-storage", sidecarMsg, 0, 37},
		{"1.37 kubelet with InPlacePodVerticalScalingMemoryBackedVolumes does not evict for a memory emptyDir's sizeLimit",
			func(t *testing.T) string { return memoryEmptyDirSnapshot(t, "v1.37.2", true) }, nil,
			"default/scratch", "pressure", "", 0, 37},
		{"1.37 kubelet without the gate evicts for a memory emptyDir's sizeLimit",
			func(t *testing.T) string { return memoryEmptyDirSnapshot(t, "v1.37.2", false) }, nil,
			"default/scratch", "local-storage", emptyDirMsg, 0, 37},
		{"1.36 kubelet with the gate set evicts for a memory emptyDir's sizeLimit",
			func(t *testing.T) string { return memoryEmptyDirSnapshot(t, "v1.36.3", true) }, nil,
			"default/scratch", "local-storage", emptyDirMsg, 0, 36},
		{"1.34 kubelet with AllowOverwriteTerminationGracePeriodSeconds gives a soft eviction evictionMaxPodGracePeriod",
			func(t *testing.T) string { return softGraceSnapshot(t, "v1.34.4", true) }, nil,
			"jobs/batch", "pressure", "", 60, 34},
		{"1.34 kubelet without the gate gives a soft eviction the pod's shorter grace",
			func(t *testing.T) string { return softGraceSnapshot(t, "v1.34.4", false) }, nil,
			"jobs/batch", "pressure", "", 30, 34},
		{"1.37 kubelet ignores the gate and gives a soft eviction the pod's shorter grace",
			func(t *testing.T) string { return softGraceSnapshot(t, "v1.37.2", true) }, nil,
			"jobs/batch", "pressure", "", 30, 37},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := explainSemanticsJSON(t, tt.dir(t), tt.flags...)
			if r.Kubelet.Semantics.Minor != tt.wantMin {
				t.Errorf("semantics minor = %d, want %d", r.Kubelet.Semantics.Minor, tt.wantMin)
			}
			path, msg, grace := r.victim(t, tt.pod)
			if path != tt.wantPath {
				t.Errorf("%s: path = %q, want %q (message %q)", tt.pod, path, tt.wantPath, msg)
			}
			if tt.wantMsg != "" && msg != tt.wantMsg {
				t.Errorf("%s: message = %q, want %q", tt.pod, msg, tt.wantMsg)
			}
			if tt.wantGr != 0 && grace != tt.wantGr {
				t.Errorf("%s: grace = %d, want %d", tt.pod, grace, tt.wantGr)
			}
			for _, w := range r.Warnings {
				if strings.Contains(w, "kubeletVersion") {
					t.Errorf("unexpected warning %q", w)
				}
			}
		})
	}
}

func TestExplainWarnsOnAnUnsupportedKubeletVersion(t *testing.T) {
	dir := sidecarSnapshot(t, "v1.38.1")
	r := explainSemanticsJSON(t, dir)
	if r.Kubelet.Semantics.Minor != 37 || r.Kubelet.Semantics.Version != "v1.38.1" {
		t.Errorf("semantics = %+v, want 1.37 from v1.38.1", r.Kubelet.Semantics)
	}
	want := `status.nodeInfo.kubeletVersion: kubelet version "v1.38.1": newer than 1.37, the newest supported: ` +
		`using kubelet 1.37 semantics`
	found := false
	for _, w := range r.Warnings {
		found = found || strings.Contains(w, want)
	}
	if !found {
		t.Errorf("warnings %q, want one containing %q", r.Warnings, want)
	}
	text, err := runCLI(t, "explain", "--snapshot", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "KUBELET: what the kubelet v1.37 (node reports v1.38.1) would do") {
		t.Errorf("text output does not name the semantics used:\n%s", text)
	}
}
