package deploy

import (
	"strings"
	"testing"
)

// agent.hostPaths.imageFsDir: empty (default) mounts nothing and leaves imageFsDir out of the agent's
// configuration; set, the host directory is mounted read-only, without propagation, at /host/imagefs and
// named as the configuration's imageFsDir (statfs for imagefs.* and the node's filesystem layout).
func TestImageFsDirIsMountedReadOnlyOnlyWhenSet(t *testing.T) {
	objs := objects(t, render(t, defaultValues))
	if _, ok := volumesOf(t, podSpec(t, find(t, objs, "DaemonSet", "pressure-agent")))["imagefs"]; ok {
		t.Errorf("imagefs volume rendered with agent.hostPaths.imageFsDir empty")
	}
	if ac := configFile(t, objs, "pressure-agent"); strings.Contains(ac, "imageFsDir") {
		t.Errorf("agent configuration names an imageFsDir with agent.hostPaths.imageFsDir empty:\n%s", ac)
	}
	objs = objects(t, render(t, defaultValues, "agent.hostPaths.imageFsDir=/var/lib/containerd"))
	spec := podSpec(t, find(t, objs, "DaemonSet", "pressure-agent"))
	if got := volumesOf(t, spec)["imagefs"]; got != "hostPath:/var/lib/containerd" {
		t.Errorf("imagefs volume %q, want hostPath:/var/lib/containerd", got)
	}
	var mount map[string]any
	for _, m := range spec["containers"].([]any)[0].(map[string]any)["volumeMounts"].([]any) {
		if m := m.(map[string]any); m["name"] == "imagefs" {
			mount = m
		}
	}
	if mount == nil || mount["mountPath"] != "/host/imagefs" || mount["readOnly"] != true || mount["mountPropagation"] != "None" {
		t.Errorf("imagefs mount %v, want /host/imagefs, readOnly, mountPropagation None", mount)
	}
	if ac := configFile(t, objs, "pressure-agent"); !strings.Contains(ac, "imageFsDir: /host/imagefs") {
		t.Errorf("agent configuration lacks imageFsDir: /host/imagefs:\n%s", ac)
	}
	_, err := tryHelm(t, "template", releaseName, chartDir(t), "--namespace", releaseNS, "--kube-version", kubeVersion,
		"--set", "agent.hostPaths.imageFsDir=var/lib/containerd")
	if err == nil ||
		!strings.Contains(err.Error(), "imageFsDir") {
		t.Errorf("a relative agent.hostPaths.imageFsDir: err %v, want a schema error naming imageFsDir", err)
	}
}
