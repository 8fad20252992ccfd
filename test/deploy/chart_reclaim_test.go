package deploy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// agent.reclaim mounts exactly one host directory writable, the pods cgroup of the memory controller
// (v1) or of the unified tree (v2), over the recursively read-only cgroup tree, and names it in the
// agent's configuration; off, nothing of it is rendered.
func TestReclaimMountsOnlyThePodsCgroupWritable(t *testing.T) {
	for _, tc := range []struct {
		name, podsCgroup, wantHost, wantMount, wantConfig string
	}{
		{name: "cgroup v1, cgroupfs driver", podsCgroup: "memory/kubepods",
			wantHost: "hostPath:/sys/fs/cgroup/memory/kubepods", wantMount: "/host/sys/fs/cgroup/memory/kubepods", wantConfig: "action:\n    enabled: true"},
		{name: "cgroup v2, systemd driver, trailing slash trimmed", podsCgroup: "kubepods.slice/",
			wantHost: "hostPath:/sys/fs/cgroup/kubepods.slice", wantMount: "/host/sys/fs/cgroup/kubepods.slice", wantConfig: "action:\n    enabled: true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := objects(t, render(t, defaultValues, "agent.reclaim.enabled=true", "agent.reclaim.podsCgroup="+tc.podsCgroup))
			ds := find(t, objs, "DaemonSet", "pressure-agent")
			spec := podSpec(t, ds)
			vols := volumesOf(t, spec)
			writable := map[string]string{}
			for _, m := range container(t, ds)["volumeMounts"].([]any) {
				m := m.(map[string]any)
				if m["readOnly"] == true {
					if strings.HasPrefix(vols[m["name"].(string)], "hostPath:") && m["recursiveReadOnly"] != "Enabled" {
						t.Errorf("read-only host mount %v: want recursiveReadOnly Enabled beside a writable cgroup", m)
					}
					continue
				}
				if m["mountPropagation"] != "None" {
					t.Errorf("writable mount %v: want mountPropagation None", m)
				}
				writable[m["name"].(string)] = vols[m["name"].(string)] + " at " + m["mountPath"].(string)
			}
			want := map[string]string{"reclaim-pods": tc.wantHost + " at " + tc.wantMount}
			if d := cmp.Diff(writable, want); d != "" {
				t.Errorf("writable mounts of the agent (-got +want):\n%s", d)
			}
			ac := configFile(t, objs, "pressure-agent")
			if !strings.Contains(ac, "reclaim:\n  "+tc.wantConfig) {
				t.Errorf("the agent configuration lacks reclaim enabled with %q:\n%s", tc.wantConfig, ac)
			}
		})
	}
	ac := configFile(t, objects(t, render(t, defaultValues)), "pressure-agent")
	if strings.Contains(ac, "reclaim") {
		t.Errorf("default values: the configuration mentions reclaim:\n%s", ac)
	}
}
