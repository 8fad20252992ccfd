package deploy

// agent.kubeletConfig.hostPath on managed nodes (issue 34, item 4): the file alone is mounted, and a
// host without it does not leave the agent in ContainerCreating.

import (
	"testing"
)

func TestKubeletConfigFileIsMountedAloneAndAMissingOneDoesNotBlockThePod(t *testing.T) {
	for _, tc := range []struct{ name, hostPath, mountPath string }{
		{"kubeadm, the default", "", "/etc/kubelet-host/config.yaml"},
		{"EKS AL2023", "/etc/kubernetes/kubelet/config.json", "/etc/kubelet-host/config.json"},
		{"GKE", "/home/kubernetes/kubelet-config.yaml", "/etc/kubelet-host/kubelet-config.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var set []string
			want := "/var/lib/kubelet/config.yaml"
			if tc.hostPath != "" {
				set, want = []string{"agent.kubeletConfig.hostPath=" + tc.hostPath}, tc.hostPath
			}
			objs := objects(t, render(t, defaultValues, set...))
			spec := podSpec(t, find(t, objs, "DaemonSet", "pressure-agent"))
			var hostPath map[string]any
			for _, v := range spec["volumes"].([]any) {
				if v := v.(map[string]any); v["name"] == "kubelet-config" {
					hostPath, _ = v["hostPath"].(map[string]any)
				}
			}
			// FileOrCreate: where the host has no file, the kubelet creates an empty one and the pod
			// starts; the agent's preflight refuses it and says what to set. File would block the pod.
			if hostPath == nil || hostPath["path"] != want || hostPath["type"] != "FileOrCreate" {
				t.Errorf("kubelet-config volume %v, want hostPath %s type FileOrCreate", hostPath, want)
			}
			for _, m := range container(t, find(t, objs, "DaemonSet", "pressure-agent"))["volumeMounts"].([]any) {
				if m := m.(map[string]any); m["name"] == "kubelet-config" && (m["mountPath"] != tc.mountPath || m["readOnly"] != true) {
					t.Errorf("kubelet-config mounted %v, want read-only at %s", m, tc.mountPath)
				}
			}
			if got := volumesOf(t, spec); len(got) != 4 {
				t.Errorf("agent volumes %v: want cgroup, nodefs, kubelet-config and config only (no kubelet directory)", got)
			}
		})
	}
}
