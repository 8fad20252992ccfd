package e2e

// Issue 34: a dry-run install (the chart's default, dryRun: true) changes no pod, node, ConfigMap or
// admission object over a real pressure episode, as the API server's audit log of every write sees it.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/evidence"
	"github.com/kube-pressure/pressure/test/chartinstall"
	"github.com/kube-pressure/pressure/test/evictaudit"
)

func TestChartDryRunInstallWritesNothingOverAPressureEpisode(t *testing.T) {
	e := requireNode(t)
	resetNode(t, e)
	// The package's audit log holds the earlier tests' writes (their chart-installed agents use the same
	// ServiceAccounts): only what comes after this point counts, the install included.
	before, err := evictaudit.ReadWrites(e.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	// The chart's defaults with the janitor, dryRun=true over NodeValues' dryRun=false; the janitor's
	// TTL and keepPerOwner are test facts, so that it reaches the kubelet's Evicted pod within the test.
	chartinstall.ForTest{Name: chartRelease, Namespace: chartNamespace, Tag: chartTag, Node: e.node,
		ControlPlane: e.cp, Client: e.client, Janitor: true, Defaults: true}.Install(t,
		"dryRun=true", "janitor.config.ttl=5s", "janitor.config.keepPerOwner=0")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "chart-dry")
	// The dry agent evicts nothing, so the hog grows until the real kubelet evicts it.
	evictHogByKubelet(ctx, t, e, ns, "hog")
	poll(ctx, t, "the agent's "+actuate.ReasonPressureEvictionDryRun+" Event", func() (bool, string) {
		evs := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEvictionDryRun)
		return len(evs) > 0, fmt.Sprint(summarize(eventsIn(ctx, t, e, ns, "")))
	})
	// Either evidence Event: a janitor that deleted for real fails below, on the pod and the audit log.
	poll(ctx, t, "the janitor's "+evidence.EventReasonDryRun+" Event", func() (bool, string) {
		evs := append(eventsIn(ctx, t, e, ns, evidence.EventReasonDryRun), eventsIn(ctx, t, e, ns, evidence.EventReason)...)
		return len(evs) > 0, fmt.Sprint(summarize(eventsIn(ctx, t, e, ns, "")))
	})
	if _, err := e.client.CoreV1().Pods(ns).Get(ctx, "hog", metav1.GetOptions{}); err != nil {
		t.Errorf("the Evicted pod hog: %v; want it kept by the dry-run janitor", err)
	}
	if tn := nodeTaint(ctx, t, e); tn != nil {
		t.Errorf("the dry-run agent tainted the node: %v", tn)
	}
	ws, err := evictaudit.ReadWrites(e.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	var dry, wet []string
	for _, w := range ws[min(len(before), len(ws)):] {
		if !strings.HasPrefix(w.User, "system:serviceaccount:"+chartNamespace+":") {
			continue
		}
		if w.DryRun {
			dry = append(dry, w.String())
		} else {
			wet = append(wet, w.String())
		}
	}
	if len(wet) > 0 {
		t.Errorf("the dry-run release wrote %d objects:\n%s", len(wet), strings.Join(wet, "\n"))
	}
	// The janitor's dry-run delete is in the log: the check above sees the release's writes.
	if !hasWrite(dry, "delete pods "+ns+"/hog") {
		t.Errorf("no dry-run delete of %s/hog in the audit log; the release's dry-run writes:\n%s", ns, strings.Join(dry, "\n"))
	}
	t.Logf("the release's dry-run writes (%d):\n%s", len(dry), strings.Join(dry, "\n"))
}

// hasWrite reports whether one of the writes (Write.String) starts with prefix.
func hasWrite(ws []string, prefix string) bool {
	for _, w := range ws {
		if strings.HasPrefix(w, prefix) {
			return true
		}
	}
	return false
}
