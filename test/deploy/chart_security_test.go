package deploy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Template tests of issue 17 (docs/security.md): what the chart mounts, grants and runs as.

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// volumesOf maps the volume names of the pod spec to their source kind (hostPath, emptyDir, ...)
// and, for hostPath, the path.
func volumesOf(t *testing.T, spec map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, v := range spec["volumes"].([]any) {
		v := v.(map[string]any)
		name := v["name"].(string)
		switch {
		case v["hostPath"] != nil:
			out[name] = "hostPath:" + v["hostPath"].(map[string]any)["path"].(string)
		case v["emptyDir"] != nil:
			out[name] = "emptyDir"
		case v["configMap"] != nil:
			out[name] = "configMap"
		default:
			out[name] = "other"
		}
	}
	return out
}

func TestAgentGetsNoKubeletAPIAndNoKubeletFilesByDefault(t *testing.T) {
	objs := objects(t, render(t, defaultValues))
	if role := find(t, objs, "ClusterRole", "pressure-agent"); hasRule(role, "nodes/proxy") {
		t.Errorf("the agent's ClusterRole grants nodes/proxy (exec on every kubelet): %v", role.Object["rules"])
	}
	vap := find(t, objs, "ValidatingAdmissionPolicy", "pressure-agent-own-node")
	if b, _ := json.Marshal(vap.Object); strings.Contains(string(b), "nodes/proxy") {
		t.Errorf("the agent's policy still matches nodes/proxy without source nodeProxy")
	}
	ds := find(t, objs, "DaemonSet", "pressure-agent")
	got := volumesOf(t, podSpec(t, ds))
	want := map[string]string{
		"cgroup": "hostPath:/sys/fs/cgroup", "nodefs": "emptyDir",
		"kubelet-config": "hostPath:/var/lib/kubelet/config.yaml", "config": "configMap",
	}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("agent volumes (-got +want):\n%s", d)
	}
	ac := configFile(t, objs, "pressure-agent")
	for _, line := range []string{"kubeletConfigFile: /etc/kubelet-host/config.yaml", "kubeletRootDir: /host/var/lib/kubelet"} {
		if !strings.Contains(ac, line) {
			t.Errorf("agent configuration lacks %q:\n%s", line, ac)
		}
	}
	// The opt-in host mount of the kubelet root dir.
	ds = find(t, objects(t, render(t, defaultValues, "agent.hostPaths.kubeletRootDir=/var/lib/kubelet")), "DaemonSet", "pressure-agent")
	if got := volumesOf(t, podSpec(t, ds))["nodefs"]; got != "hostPath:/var/lib/kubelet" {
		t.Errorf("with agent.hostPaths.kubeletRootDir set, nodefs volume %q, want hostPath:/var/lib/kubelet", got)
	}
}

func TestNodeProxySourceGrantsNodesProxyAndAdmitsExactlyConfigz(t *testing.T) {
	objs := objects(t, render(t, defaultValues, "agent.kubeletConfig.source=nodeProxy"))
	if role := find(t, objs, "ClusterRole", "pressure-agent"); !hasRule(role, "nodes/proxy") {
		t.Errorf("source nodeProxy: the agent's ClusterRole lacks nodes/proxy: %v", role.Object["rules"])
	}
	b, err := json.Marshal(find(t, objs, "ValidatingAdmissionPolicy", "pressure-agent-own-node").Object)
	if err != nil {
		t.Fatal(err)
	}
	policy := string(b)
	if !strings.Contains(policy, "object.?path.orValue('') in ['configz', '/configz']") || strings.Contains(policy, "matches(") {
		t.Errorf("the /configz rule is not an exact match:\n%s", policy)
	}
	if got := volumesOf(t, podSpec(t, find(t, objs, "DaemonSet", "pressure-agent"))); got["kubelet-config"] != "" {
		t.Errorf("source nodeProxy still mounts the kubelet config file: %v", got)
	}
	if ac := configFile(t, objs, "pressure-agent"); strings.Contains(ac, "kubeletConfigFile") {
		t.Errorf("source nodeProxy: the agent configuration names a kubelet config file:\n%s", ac)
	}
}

func TestEveryAgentHostMountIsRecursivelyReadOnlyWithoutPropagation(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  []string
		want string
	}{
		// The default non-root agent cannot write a root-owned cgroup file of a writable submount: it takes
		// the runtime's best (recursive on containerd 2.0+, plain read-only on 1.6/1.7, which still starts).
		{name: "default: non-root agent, recursive where the runtime can", want: "IfPossible"},
		{name: "per-pod disk usage, still non-root", set: []string{"agent.podDiskUsage.enabled=true"}, want: "IfPossible"},
		{name: "non-root agent with Enabled asked for", set: []string{"agent.recursiveReadOnly=Enabled"}, want: "Enabled"},
		{name: "older runtime asked for", set: []string{"agent.recursiveReadOnly=IfPossible"}, want: "IfPossible"},
		// Every setting that runs the agent as uid 0 gets recursive read-only mounts under Auto.
		{name: "host kubelet root dir and kill rung (root)", set: []string{"agent.hostPaths.kubeletRootDir=/var/lib/kubelet", "agent.cgroupKill.enabled=true"}, want: "Enabled"},
		{name: "memcg notifier, root (its two event_control files are checked by the memcg test)", set: []string{"agent.notifiers.memcg.enabled=true"}, want: "Enabled"},
		{name: "sub-second psi, root", set: []string{"agent.notifiers.psi.subSecond=true"}, want: "Enabled"},
		{name: "reclaim rung, root (its writable pods cgroup is checked by the reclaim test)", set: []string{"agent.reclaim.enabled=true"}, want: "Enabled"},
		{name: "root on an older runtime, accepted explicitly", set: []string{"agent.notifiers.memcg.enabled=true", "agent.recursiveReadOnly=IfPossible", "agent.insecureRootWithoutRecursiveReadOnly=true"}, want: "IfPossible"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := find(t, objects(t, render(t, defaultValues, tc.set...)), "DaemonSet", "pressure-agent")
			vols := volumesOf(t, podSpec(t, ds))
			hostMounts := 0
			for _, m := range container(t, ds)["volumeMounts"].([]any) {
				m := m.(map[string]any)
				if !strings.HasPrefix(vols[m["name"].(string)], "hostPath:") || strings.HasPrefix(m["name"].(string), "memcg-") ||
					m["name"] == "reclaim-pods" {
					continue
				}
				hostMounts++
				if m["readOnly"] != true || m["recursiveReadOnly"] != tc.want || m["mountPropagation"] != "None" {
					t.Errorf("host mount %v: want readOnly true, recursiveReadOnly %s, mountPropagation None", m, tc.want)
				}
			}
			if hostMounts == 0 {
				t.Fatal("no host mount found")
			}
		})
	}
}

// agent.podDiskUsage mounts the kubelet's pods directory and podLogsDir and nothing more of the kubelet
// (nodefs stays the emptyDir, no kubelet credential is visible), names them in the configuration, and
// adds the supplemental group 0 the kubelet's 0750 directories need, the agent staying non-root.
func TestPodDiskUsageMountsOnlyThePodsAndLogDirectoriesAndJoinsGroupZero(t *testing.T) {
	objs := objects(t, render(t, defaultValues, "agent.podDiskUsage.enabled=true", "agent.podSecurityContext.supplementalGroups={7}"))
	ds := find(t, objs, "DaemonSet", "pressure-agent")
	got := volumesOf(t, podSpec(t, ds))
	want := map[string]string{
		"cgroup": "hostPath:/sys/fs/cgroup", "nodefs": "emptyDir", "kubelet-config": "hostPath:/var/lib/kubelet/config.yaml",
		"config": "configMap", "kubelet-pods": "hostPath:/var/lib/kubelet/pods", "pod-logs": "hostPath:/var/log/pods",
	}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("agent volumes (-got +want):\n%s", d)
	}
	mounts := map[string]string{}
	for _, m := range container(t, ds)["volumeMounts"].([]any) {
		m := m.(map[string]any)
		mounts[m["name"].(string)] = m["mountPath"].(string)
	}
	if mounts["kubelet-pods"] != "/host/kubelet-pods" || mounts["pod-logs"] != "/host/var/log/pods" {
		t.Errorf("mounts %v: want kubelet-pods at /host/kubelet-pods and pod-logs at /host/var/log/pods", mounts)
	}
	ac := configFile(t, objs, "pressure-agent")
	for _, line := range []string{"kubeletPodsDir: /host/kubelet-pods", "podLogsDir: /host/var/log/pods", "kubeletRootDir: /host/var/lib/kubelet"} {
		if !strings.Contains(ac, line) {
			t.Errorf("agent configuration lacks %q:\n%s", line, ac)
		}
	}
	psc := podSpec(t, ds)["securityContext"].(map[string]any)
	if d := cmp.Diff(psc["supplementalGroups"], []any{float64(7), float64(0)}); d != "" {
		t.Errorf("supplementalGroups (-got +want):\n%s", d)
	}
	if sc := container(t, ds)["securityContext"].(map[string]any); sc["runAsNonRoot"] != true || sc["runAsUser"] != nil {
		t.Errorf("securityContext %v: want the image's non-root user", sc)
	}
	def := podSpec(t, find(t, objects(t, render(t, defaultValues)), "DaemonSet", "pressure-agent"))
	if sg := def["securityContext"].(map[string]any)["supplementalGroups"]; sg != nil {
		t.Errorf("default supplementalGroups %v, want none", sg)
	}
}

func TestAgentRunsAsNonRootUnlessTheKillRungOrANotifierNeedsRoot(t *testing.T) {
	for _, tc := range []struct {
		name        string
		set         []string
		wantNonRoot bool
		wantUser    any
		wantAdd     []any
	}{
		{name: "default", wantNonRoot: true, wantUser: nil},
		{name: "cgroup kill", set: []string{"agent.cgroupKill.enabled=true"}, wantNonRoot: false, wantUser: float64(0), wantAdd: []any{"KILL"}},
		{name: "memcg notifier: root without any capability", set: []string{"agent.notifiers.memcg.enabled=true"}, wantNonRoot: false, wantUser: float64(0)},
		{name: "sub-second psi: root with CAP_SYS_RESOURCE", set: []string{"agent.notifiers.psi.subSecond=true"}, wantNonRoot: false, wantUser: float64(0), wantAdd: []any{"SYS_RESOURCE"}},
		{name: "reclaim rung: root without any capability", set: []string{"agent.reclaim.enabled=true"}, wantNonRoot: false, wantUser: float64(0)},
		{name: "all three", set: []string{"agent.cgroupKill.enabled=true", "agent.notifiers.memcg.enabled=true", "agent.notifiers.psi.subSecond=true"},
			wantNonRoot: false, wantUser: float64(0), wantAdd: []any{"KILL", "SYS_RESOURCE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := find(t, objects(t, render(t, defaultValues, tc.set...)), "DaemonSet", "pressure-agent")
			sc := container(t, ds)["securityContext"].(map[string]any)
			if sc["runAsNonRoot"] != tc.wantNonRoot || sc["runAsUser"] != tc.wantUser {
				t.Errorf("securityContext runAsNonRoot=%v runAsUser=%v, want %v %v", sc["runAsNonRoot"], sc["runAsUser"], tc.wantNonRoot, tc.wantUser)
			}
			caps, _ := sc["capabilities"].(map[string]any)
			add, _ := caps["add"].([]any)
			if d := cmp.Diff(add, tc.wantAdd); d != "" {
				t.Errorf("capabilities.add (-got +want):\n%s", d)
			}
			if d := cmp.Diff(caps["drop"], []any{"ALL"}); d != "" {
				t.Errorf("capabilities.drop (-got +want):\n%s", d)
			}
		})
	}
}

func TestMemcgNotifierMountsOnlyTheTwoEventControlFilesWritable(t *testing.T) {
	objs := objects(t, render(t, defaultValues, "agent.notifiers.memcg.enabled=true", "agent.notifiers.memcg.podsCgroup=kubepods"))
	ds := find(t, objs, "DaemonSet", "pressure-agent")
	spec := podSpec(t, ds)
	types := map[string]any{}
	for _, v := range spec["volumes"].([]any) {
		v := v.(map[string]any)
		if hp, ok := v["hostPath"].(map[string]any); ok {
			types[v["name"].(string)] = hp["type"]
		}
	}
	vols := volumesOf(t, spec)
	writable := map[string]string{}
	for _, m := range container(t, ds)["volumeMounts"].([]any) {
		m := m.(map[string]any)
		name := m["name"].(string)
		if m["readOnly"] == true {
			continue
		}
		writable[name] = vols[name] + " at " + m["mountPath"].(string)
		if types[name] != "File" || m["mountPropagation"] != "None" {
			t.Errorf("writable mount %s: hostPath type %v, propagation %v; want File, None", name, types[name], m["mountPropagation"])
		}
	}
	want := map[string]string{
		"memcg-root": "hostPath:/sys/fs/cgroup/memory/cgroup.event_control at /host/sys/fs/cgroup/memory/cgroup.event_control",
		"memcg-pods": "hostPath:/sys/fs/cgroup/memory/kubepods/cgroup.event_control at /host/sys/fs/cgroup/memory/kubepods/cgroup.event_control",
	}
	if d := cmp.Diff(writable, want); d != "" {
		t.Errorf("writable mounts of the agent (-got +want):\n%s", d)
	}
	// Off by default: no writable host file, the non-root user.
	ds = find(t, objects(t, render(t, defaultValues)), "DaemonSet", "pressure-agent")
	for _, m := range container(t, ds)["volumeMounts"].([]any) {
		if m := m.(map[string]any); m["readOnly"] != true {
			t.Errorf("default values: writable mount %v", m)
		}
	}
	if ac := configFile(t, objs, "pressure-agent"); strings.Contains(ac, "psiWindow") {
		t.Errorf("the memcg notifier changed the PSI window:\n%s", ac)
	}
	ac := configFile(t, objects(t, render(t, defaultValues, "agent.notifiers.psi.subSecond=true")), "pressure-agent")
	if !strings.Contains(ac, "psiWindow: 500ms") {
		t.Errorf("agent.notifiers.psi.subSecond: the configuration lacks psiWindow: 500ms:\n%s", ac)
	}
}

func TestJanitorRunsAsTheImagesNonRootUser(t *testing.T) {
	dep := find(t, objects(t, render(t, defaultValues)), "Deployment", "pressure-janitor")
	psc := podSpec(t, dep)["securityContext"].(map[string]any)
	if psc["runAsNonRoot"] != true || psc["runAsUser"] != nil || psc["runAsGroup"] != nil {
		t.Errorf("janitor pod securityContext %v: want runAsNonRoot true and the image's user (no runAsUser/runAsGroup)", psc)
	}
}

func TestImagesCanBePinnedByDigest(t *testing.T) {
	objs := objects(t, render(t, defaultValues, "agent.image.digest="+testDigest, "image.tag=v1"))
	if got, want := container(t, find(t, objs, "DaemonSet", "pressure-agent"))["image"], "pressure.local/pressure-agent@"+testDigest; got != want {
		t.Errorf("agent image %v, want %v", got, want)
	}
	if got, want := container(t, find(t, objs, "Deployment", "pressure-janitor"))["image"], "pressure.local/pressure-janitor:v1"; got != want {
		t.Errorf("janitor image %v, want %v (no digest set)", got, want)
	}
	dep := find(t, objects(t, render(t, allValues)), "Deployment", "pressure-all-janitor")
	if got, want := container(t, dep)["image"], "registry.example.com/pressure/janitor@"+testDigest; got != want {
		t.Errorf("all-values janitor image %v, want %v", got, want)
	}
}

func TestBadSecurityValuesAreRefusedNamingTheValue(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"agent.image.digest=sha256:abc", `image digest "sha256:abc" of pressure-agent`},
		{"janitor.image.digest=latest", `image digest "latest" of pressure-janitor`},
		{"agent.kubeletConfig.source=configz", `agent.kubeletConfig.source "configz": want file or nodeProxy`},
		{"agent.recursiveReadOnly=Yes", `agent.recursiveReadOnly "Yes": want Auto, Enabled, IfPossible or Disabled`},
		{"agent.recursiveReadOnly=IfPossible,agent.notifiers.memcg.enabled=true",
			`agent.recursiveReadOnly "IfPossible" with agent.notifiers.memcg.enabled=true: these run the agent as uid 0`},
		{"agent.recursiveReadOnly=Disabled,agent.cgroupKill.enabled=true",
			`agent.recursiveReadOnly "Disabled" with agent.cgroupKill.enabled=true: these run the agent as uid 0`},
		{"agent.recursiveReadOnly=IfPossible,agent.notifiers.psi.subSecond=true,agent.cgroupKill.enabled=true",
			`agent.recursiveReadOnly "IfPossible" with agent.cgroupKill.enabled=true, agent.notifiers.psi.subSecond=true: these run the agent as uid 0`},
		{"agent.kubeletConfig.hostPath=", "agent.kubeletConfig.hostPath is required"},
		{"agent.reclaim.enabled=true,agent.recursiveReadOnly=IfPossible,agent.insecureRootWithoutRecursiveReadOnly=true",
			`agent.reclaim.enabled=true with agent.recursiveReadOnly "IfPossible": the reclaim rung mounts the pods cgroup writable`},
		{"agent.reclaim.enabled=true,agent.recursiveReadOnly=Disabled,agent.insecureRootWithoutRecursiveReadOnly=true",
			`agent.reclaim.enabled=true with agent.recursiveReadOnly "Disabled"`},
		{"agent.reclaim.enabled=true,agent.reclaim.podsCgroup=../../etc", `agent.reclaim.podsCgroup "../../etc": want the pods cgroup relative`},
		{"agent.reclaim.enabled=true,agent.reclaim.podsCgroup=/etc", `agent.reclaim.podsCgroup "/etc": want the pods cgroup relative`},
		{"agent.notifiers.memcg.enabled=true,agent.notifiers.memcg.podsCgroup=../../etc", `agent.notifiers.memcg.podsCgroup "../../etc": want the pods cgroup`},
	} {
		t.Run(tc.set, func(t *testing.T) {
			_, err := tryHelm(t, "template", releaseName, chartDir(t), "--namespace", releaseNS, "--kube-version", kubeVersion, "--set", tc.set)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("helm template --set %s: %v, want an error with %q", tc.set, err, tc.want)
			}
		})
	}
}

func TestAgentNodePolicyFollowsTheConfiguredTaintKey(t *testing.T) {
	objs := objects(t, render(t, defaultValues, "agent.config.loopBreaker.taintKey=example.com/evicting"))
	b, err := json.Marshal(find(t, objs, "ValidatingAdmissionPolicy", "pressure-agent-own-node").Object)
	if err != nil {
		t.Fatal(err)
	}
	if p := string(b); !strings.Contains(p, "t.key == 'example.com/evicting'") || strings.Contains(p, "pressure.kube-pressure.io/evicting") {
		t.Errorf("the Node rule does not use the configured taint key example.com/evicting:\n%s", p)
	}
}
