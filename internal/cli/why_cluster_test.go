package cli

// Level 1 (real kube-apiserver + etcd, no kubelet): what `why` finds of pods that are gone, from the
// Events the API server still serves (written here as the kubelet writes them). The real causes are
// produced on the real node in test/e2e/why_test.go; these cases are about finding the evidence: a
// gone pod asked by UID, a name reused by a newer pod, and --since.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/why"
)

func TestWhyFindsGonePodsByUIDAndNameAndHonoursSince(t *testing.T) {
	cp, cs, ctx := controlPlane(t, 2*time.Minute)
	const ns = "shop"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	event := func(name, pod, uid, reason, typ, msg string, last time.Time) {
		t.Helper()
		e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod, UID: types.UID(uid), APIVersion: "v1"},
			Reason:         reason, Message: msg, Type: typ, Count: 1,
			Source:         corev1.EventSource{Component: "kubelet", Host: "node-gone"},
			FirstTimestamp: metav1.NewTime(last), LastTimestamp: metav1.NewTime(last)}
		if _, err := cs.CoreV1().Events(ns).Create(ctx, e, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const evictMsg = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "
	// A pod deleted by a user: only the kubelet's Killing Event remains.
	const byUID = "0c3e55a2-0000-4000-8000-000000000001"
	event("deleted.1", "deleted", byUID, why.ReasonKilling, corev1.EventTypeNormal, "Stopping container c", now.Add(-time.Minute))
	// web-0 of a StatefulSet: the first pod was evicted by the kubelet, its replacement of the same
	// name was deleted later.
	const oldWeb, newWeb = "0c3e55a2-0000-4000-8000-000000000002", "0c3e55a2-0000-4000-8000-000000000003"
	event("web-0.1", "web-0", oldWeb, why.ReasonEvicted, corev1.EventTypeWarning, evictMsg, now.Add(-20*time.Minute))
	event("web-0.2", "web-0", newWeb, why.ReasonKilling, corev1.EventTypeNormal, "Stopping container c", now.Add(-time.Minute))
	// A pod evicted three hours ago.
	const oldUID = "0c3e55a2-0000-4000-8000-000000000004"
	event("old.1", "old", oldUID, why.ReasonEvicted, corev1.EventTypeWarning, evictMsg, now.Add(-3*time.Hour))

	verdict := func(args ...string) why.Verdict {
		t.Helper()
		out, err := runCLI(t, append([]string{"--kubeconfig", cp.Kubeconfig(), "why", "-n", ns, "-o", "json"}, args...)...)
		if err != nil {
			t.Fatalf("why %v: %v", args, err)
		}
		var v why.Verdict
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("why %v: not JSON: %v\n%s", args, err, out)
		}
		return v
	}
	evidence := func(v why.Verdict) string {
		var s []string
		for _, f := range v.Evidence {
			s = append(s, f.Source+": "+f.Detail)
		}
		return strings.Join(s, "\n")
	}

	t.Run("a gone pod asked by UID is found by its Events", func(t *testing.T) {
		v := verdict(byUID)
		if v.Cause != why.CauseDeleted || !v.PodGone || v.Pod != "deleted" || v.UID != byUID || v.Node != "node-gone" {
			t.Errorf("verdict %s pod %q uid %q node %q gone %v (%s), want Deleted of the gone pod deleted, uid %s, on node-gone",
				v.Cause, v.Pod, v.UID, v.Node, v.PodGone, v.Summary, byUID)
		}
		if !strings.Contains(evidence(v), "Stopping container c") {
			t.Errorf("evidence does not quote the kubelet's Killing Event:\n%s", evidence(v))
		}
	})
	t.Run("a name reused by a newer pod: the verdict is about the newest pod only", func(t *testing.T) {
		v := verdict("web-0")
		if v.Cause != why.CauseDeleted || v.UID != newWeb || strings.Contains(evidence(v), "low on resource") {
			t.Errorf("verdict %s uid %q (%s), evidence:\n%s\nwant Deleted of %s without the earlier pod's eviction", v.Cause, v.UID,
				v.Summary, evidence(v), newWeb)
		}
		if !strings.Contains(strings.Join(v.Problems, "\n"), oldWeb) {
			t.Errorf("problems %q do not name the earlier pod %s whose Events were left out", v.Problems, oldWeb)
		}
		if v := verdict(oldWeb); v.Cause != why.CauseKubeletEviction || v.UID != oldWeb {
			t.Errorf("the earlier web-0 asked by UID: %s uid %q, want EvictedByKubelet of %s", v.Cause, v.UID, oldWeb)
		}
	})
	t.Run("--since leaves out Events last seen before it", func(t *testing.T) {
		if v := verdict("old"); v.Cause != why.CauseKubeletEviction {
			t.Errorf("without --since: %s (%s), want EvictedByKubelet from the 3h old Event", v.Cause, v.Summary)
		}
		if v := verdict("old", "--since", "2h"); v.Cause != why.CauseUnknown || len(v.Evidence) != 0 {
			t.Errorf("--since 2h: %s with evidence %+v, want Unknown with none (the only Event is 3h old)", v.Cause, v.Evidence)
		}
		if v := verdict("old", "--since", "4h"); v.Cause != why.CauseKubeletEviction {
			t.Errorf("--since 4h: %s, want EvictedByKubelet", v.Cause)
		}
	})
}
