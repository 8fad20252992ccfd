package deploy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The uninstall hook (agent.uninstallHook): a pre-delete Job of the agent image that stops the agent
// DaemonSet of this release and clears the taint key the agents are configured with; its identity
// exists only while it runs. test/deploy's RBAC test checks what that identity may do, test/e2e that
// helm uninstall leaves no taint on a real node.
func TestUninstallHookStopsThisReleasesAgentsAndClearsTheConfiguredTaint(t *testing.T) {
	objs := objects(t, render(t, defaultValues, "agent.config.loopBreaker.taintKey=example.com/evicting",
		"agent.uninstallHook.agentStopTimeout=90s"))
	job := find(t, objs, "Job", "pressure-agent-cleanup")
	c := container(t, job)
	var args []string
	for _, a := range c["args"].([]any) {
		args = append(args, a.(string))
	}
	want := []string{"cleanup", "--namespace=" + releaseNS, "--daemonset=pressure-agent", "--taint-key=example.com/evicting",
		"--agent-stop-timeout=90s"}
	if d := cmp.Diff(args, want); d != "" {
		t.Errorf("hook args (-got +want):\n%s", d)
	}
	if got, ds := c["image"], container(t, find(t, objs, "DaemonSet", "pressure-agent"))["image"]; got != ds {
		t.Errorf("hook image %v, want the agent's %v", got, ds)
	}
	spec := podSpec(t, job)
	if spec["serviceAccountName"] != "pressure-agent-cleanup" {
		t.Errorf("hook serviceAccountName %v, want its own pressure-agent-cleanup", spec["serviceAccountName"])
	}
	// On a node under pressure the hook's pod may be the only evictable one: critical, no agent evicts
	// it, and an eviction by anyone else does not use up the Job's retries.
	if spec["priorityClassName"] != "system-node-critical" {
		t.Errorf("hook priorityClassName %v, want system-node-critical", spec["priorityClassName"])
	}
	jobSpec := job.Object["spec"].(map[string]any)
	if d := cmp.Diff(jobSpec["podFailurePolicy"], map[string]any{"rules": []any{map[string]any{"action": "Ignore",
		"onPodConditions": []any{map[string]any{"type": "DisruptionTarget"}}}}}); d != "" {
		t.Errorf("hook podFailurePolicy (-got +want):\n%s", d)
	}
	if tol := spec["tolerations"].([]any); len(tol) != 1 || tol[0].(map[string]any)["operator"] != "Exists" {
		t.Errorf("hook tolerations %v: want every taint tolerated (each node may carry the agents' taint)", tol)
	}
	sc := c["securityContext"].(map[string]any)
	if sc["runAsNonRoot"] != true || sc["readOnlyRootFilesystem"] != true || sc["allowPrivilegeEscalation"] != false {
		t.Errorf("hook securityContext %v: want non-root, read-only root, no privilege escalation", sc)
	}
	if _, ok := spec["volumes"]; ok {
		t.Errorf("hook volumes %v: want none", spec["volumes"])
	}
	for _, kind := range []string{"Job", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
		o := find(t, objs, kind, "pressure-agent-cleanup")
		a := o.GetAnnotations()
		if a["helm.sh/hook"] != "pre-delete" || !strings.Contains(a["helm.sh/hook-delete-policy"], "hook-succeeded") {
			t.Errorf("%s/pressure-agent-cleanup annotations %v: want a pre-delete hook deleted once it succeeded", kind, a)
		}
	}
}

func TestUninstallHookOffOrWithoutTheAgentRendersNothing(t *testing.T) {
	for _, set := range []string{"agent.uninstallHook.enabled=false", "agent.enabled=false"} {
		t.Run(set, func(t *testing.T) {
			for _, k := range kindsOf(objects(t, render(t, defaultValues, set))) {
				if strings.HasSuffix(k, "/pressure-agent-cleanup") {
					t.Errorf("%s renders %s", set, k)
				}
			}
		})
	}
}
