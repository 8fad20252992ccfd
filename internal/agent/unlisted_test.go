package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/source/procfs"
)

func TestUnlistedPodsAreTheBestEffortAndBurstableOnesTheKubeletDoesNotProtect(t *testing.T) {
	tr := newTree(t, 2048*mi)
	proc := t.TempDir()
	pods := map[string]struct {
		qos string
		pid int
		adj string // "" = no such process
	}{
		"u-be":        {"besteffort", 500, "1000"},
		"u-burst":     {"burstable", 501, "980"},
		"u-critical":  {"burstable", 502, "-997"}, // node-critical (a static control-plane pod)
		"u-exited":    {"burstable", 503, ""},     // its process exited meanwhile
		"u-guarantee": {"guaranteed", 504, "-997"},
	}
	for uid, p := range pods {
		tr.setPod(uid, p.qos, 100*mi) // rewrites every pod's files
	}
	for uid, p := range pods {
		writeAtomic(t, filepath.Join(tr.root, "cgroup", "memory", podRel(uid, p.qos), "cgroup.procs"), fmt.Sprintf("%d\n", p.pid))
		if p.adj != "" {
			dir := filepath.Join(proc, fmt.Sprint(p.pid))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			writeAtomic(t, filepath.Join(dir, "oom_score_adj"), p.adj+"\n")
		}
	}
	got, err := unlistedLister(tr.node().Cgroup.Layout, procfs.NewReader(proc))()
	if err != nil {
		t.Fatal(err)
	}
	want := []UnlistedPod{{UID: "u-be", QOS: corev1.PodQOSBestEffort}, {UID: "u-burst", QOS: corev1.PodQOSBurstable},
		{UID: "u-exited", QOS: corev1.PodQOSBurstable}}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("unlisted pods (-got +want):\n%s", d)
	}
}

func TestUnlistedPodWithABadProcsFileIsAnErrorNamingIt(t *testing.T) {
	tr := newTree(t, 2048*mi)
	tr.setPod("u-be", "besteffort", 100*mi)
	procs := filepath.Join(tr.root, "cgroup", "memory", podRel("u-be", "besteffort"), "cgroup.procs")
	writeAtomic(t, procs, "12\nx\n")
	_, err := unlistedLister(tr.node().Cgroup.Layout, procfs.NewReader(t.TempDir()))()
	if err == nil || !strings.Contains(err.Error(), procs) || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("error %v, want one naming %s and the value", err, procs)
	}
}

// TestUnlistedPodsAreKilledOnlyUnderAHardThresholdUntilThePodListSyncs: with no pod list (the API server
// down since the start) the hog found in the cgroup tree is killed under the hard threshold, never sent
// to the ladder (it has no name); once the pod list is complete, unlisted pods are no longer candidates.
func TestUnlistedPodsAreKilledOnlyUnderAHardThresholdUntilThePodListSyncs(t *testing.T) {
	h := newHarness(t, func(s *Settings) { s.KillLead = 0 })
	synced := false
	h.agent.PodsSynced = func() bool { return synced }
	h.agent.Unlisted = func() ([]UnlistedPod, error) {
		return []UnlistedPod{{UID: "u-hog", QOS: corev1.PodQOSBestEffort}, {UID: "u-small", QOS: corev1.PodQOSBurstable}}, nil
	}
	h.tree.setPod("u-hog", "besteffort", 1800*mi)
	h.tree.setPod("u-small", "burstable", 100*mi) // available 148Mi: below the agent's 356Mi
	res := h.sync(time.Second)
	if d := cmp.Diff(h.killer.killed, []types.UID{"u-hog"}); d != "" {
		t.Errorf("killed (-got +want):\n%s\ntrace:\n%s", d, res.trace())
	}
	if n := len(h.ladder.names()); n != 0 {
		t.Errorf("%d ladder requests for unlisted pods, want 0", n)
	}
	h.sync(time.Second) // the kill is in flight: nothing more
	if len(h.killer.killed) != 1 {
		t.Errorf("killed %v after a second sync, want the hog once", h.killer.killed)
	}
	synced = true // the API is back and lists no pod of these cgroups
	h.killer.killed = nil
	h.sync(time.Second)
	if len(h.killer.killed) != 0 || len(h.ladder.names()) != 0 {
		t.Errorf("with the pod list complete: killed %v, requests %v; want nothing for cgroups no pod is listed for", h.killer.killed, h.ladder.names())
	}
}

func TestUnlistedPodsNeedTheKillRung(t *testing.T) {
	h := newHarness(t, nil)
	h.agent.Killer = nil // eviction.allowCgroupKill off
	h.agent.PodsSynced = func() bool { return false }
	h.agent.Unlisted = func() ([]UnlistedPod, error) { return []UnlistedPod{{UID: "u-hog", QOS: corev1.PodQOSBestEffort}}, nil }
	h.tree.setPod("u-hog", "besteffort", 1900*mi)
	res := h.sync(time.Second)
	if len(res.Plan.Evictions) != 0 || len(h.ladder.names()) != 0 {
		t.Errorf("planned %v, requested %v without the kill rung; want nothing", res.Plan.Evictions, h.ladder.names())
	}
}
