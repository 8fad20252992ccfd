package janitor

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/evidence"
)

func TestRecordCarriesTheEvidenceOfAnEvictedPod(t *testing.T) {
	pod := evictedPod("shop", "web-7d9-abc", t0, ownedBy("ReplicaSet", "web-7d9"))
	a := Select(infos(pod), t0.Add(time.Hour), defaultPolicy())[0]
	deploy := OwnerRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-d"}
	got := NewRecord(&a, deploy)
	want := evidence.Record{
		Pod: "web-7d9-abc", Namespace: "shop", UID: "uid-shop-web-7d9-abc", Owner: "Deployment/web", Node: "node-1",
		Phase: "Failed", Reason: "Evicted",
		Message:   "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi.",
		EvictedAt: t0, TimeSource: "DisruptionTarget", QOS: "Burstable",
		Requests: map[string]string{"cpu": "100m", "memory": "128Mi"}, Limits: map[string]string{"memory": "256Mi"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("NewRecord() (-got +want):\n%s", diff)
	}
	wantMsg := "Deleted pod web-7d9-abc (node node-1, Failed/Evicted at 2026-07-01T12:00:00Z, qos Burstable, " +
		"requests cpu=100m,memory=128Mi, limits memory=256Mi): The node was low on resource: memory. " +
		"Threshold quantity: 100Mi, available: 50Mi."
	if got := got.EventMessage(); got != wantMsg {
		t.Errorf("EventMessage() = %q; want %q", got, wantMsg)
	}
}

func TestWindowEventIsOnTheResolvedOwnerWithCountAndRecordsAsJSON(t *testing.T) {
	deploy := OwnerRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-d"}
	w := evidence.NewWindow("shop", deploy, t0)
	var recs []evidence.Record
	for i, name := range []string{"web-a", "web-b", "web-c"} {
		a := Select(infos(evictedPod("shop", name, t0, ownedBy("ReplicaSet", "web-7d9"))), t0.Add(time.Hour), defaultPolicy())[0]
		rec := NewRecord(&a, deploy)
		recs = append(recs, rec)
		w.Add(rec, t0.Add(time.Duration(i)*time.Second))
	}
	ev, err := evidenceEvent(w)
	if err != nil {
		t.Fatalf("Event() error: %v", err)
	}
	if !evidence.Verified(ev.Name, ev.Source.Component, ev.ReportingController) {
		t.Errorf("event %s from %q is not one why verifies as the janitor's", ev.Name, ev.Source.Component)
	}
	gotRef := ev.InvolvedObject
	wantRef := v1.ObjectReference{Kind: "Deployment", APIVersion: "apps/v1", Namespace: "shop", Name: "web", UID: "uid-d"}
	if diff := cmp.Diff(gotRef, wantRef); diff != "" {
		t.Errorf("InvolvedObject (-got +want):\n%s", diff)
	}
	if want := "pressure-janitor.uid-d.1782907200"; ev.Name != want || ev.Reason != evidence.EventReason || ev.Source.Component != Component || ev.Count != 3 {
		t.Errorf("event name %q reason %q source %q count %d; want %q, %q, %q, 3", ev.Name, ev.Reason, ev.Source.Component, ev.Count,
			want, evidence.EventReason, Component)
	}
	if !ev.FirstTimestamp.Time.Equal(t0) || !ev.LastTimestamp.Time.Equal(t0.Add(2*time.Second)) {
		t.Errorf("event timestamps %v..%v; want %v..%v", ev.FirstTimestamp, ev.LastTimestamp, t0, t0.Add(2*time.Second))
	}
	wantPrefix := "Deleted 3 pods of Deployment/web between 2026-07-01T12:00:00Z and 2026-07-01T12:00:02Z (web-a, web-b, web-c); latest: Deleted pod web-c "
	if !strings.HasPrefix(ev.Message, wantPrefix) {
		t.Errorf("message %q; want prefix %q", ev.Message, wantPrefix)
	}
	var back evidence.Window
	if err := json.Unmarshal([]byte(ev.Annotations[evidence.Annotation]), &back); err != nil {
		t.Fatalf("evidence annotation is not JSON: %v", err)
	}
	if diff := cmp.Diff(back.Pods, recs); diff != "" || back.Count != 3 || back.OwnerName != "Deployment/web" {
		t.Errorf("evidence annotation: count %d owner %q, records (-got +want):\n%s", back.Count, back.OwnerName, diff)
	}
}

func TestEventOfABarePodIsOnThePodWithTheOldMessage(t *testing.T) {
	a := Select(infos(evictedPod("shop", "bare", t0)), t0.Add(time.Hour), defaultPolicy())[0]
	rec := NewRecord(&a, OwnerRef{})
	w := evidence.NewWindow("shop", OwnerRef{APIVersion: "v1", Kind: "Pod", Name: "bare", UID: a.Pod.UID}, t0)
	w.Add(rec, t0)
	ev, err := evidenceEvent(w)
	if err != nil {
		t.Fatalf("Event() error: %v", err)
	}
	if ev.InvolvedObject.Kind != "Pod" || ev.InvolvedObject.Name != "bare" || rec.Owner != "" || ev.Name != evidence.EventName(a.Pod.UID) {
		t.Errorf("bare pod evidence %s on %s/%s owner %q; want %s on Pod/bare and no owner", ev.Name, ev.InvolvedObject.Kind,
			ev.InvolvedObject.Name, rec.Owner, evidence.EventName(a.Pod.UID))
	}
	if ev.Message != rec.EventMessage() {
		t.Errorf("message %q; want the record's %q", ev.Message, rec.EventMessage())
	}
}

func TestEventMessageIsCappedAt1024Bytes(t *testing.T) {
	a := Select(infos(evictedPod("a", "p", t0, func(p *v1.Pod) { p.Status.Message = strings.Repeat("x", 5000) })),
		t0.Add(time.Hour), defaultPolicy())[0]
	msg := NewRecord(&a, OwnerRef{}).EventMessage()
	if len(msg) != evidence.MaxMessage || !strings.HasSuffix(msg, "...") {
		t.Errorf("message length %d suffix %q; want %d ending in ...", len(msg), msg[len(msg)-3:], evidence.MaxMessage)
	}
}

func TestFirstSeenRecordNamesItsSource(t *testing.T) {
	a := Select(infos(evictedPod("a", "p", t0, noCondition())), t0, Policy{Reasons: []string{ReasonEvicted}})[0]
	if rec := NewRecord(&a, OwnerRef{}); rec.TimeSource != string(FromFirstSeen) || !rec.EvictedAt.Equal(t0) {
		t.Errorf("record source %q at %v; want %q at %v", rec.TimeSource, rec.EvictedAt, FromFirstSeen, t0)
	}
}

func TestDryRunEventSaysNothingWasDeletedUnderItsOwnReasonAndName(t *testing.T) {
	a := Select(infos(evictedPod("shop", "bare", t0)), t0.Add(time.Hour), defaultPolicy())[0]
	rec := NewRecord(&a, OwnerRef{})
	bare := evidence.NewWindow("shop", OwnerRef{APIVersion: "v1", Kind: "Pod", Name: "bare", UID: a.Pod.UID}, t0)
	bare.DryRun = true
	bare.Add(rec, t0)
	deploy := evidence.NewWindow("shop", OwnerRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-d"}, t0)
	deploy.DryRun = true
	deploy.Add(evidence.Record{Pod: "web-a"}, t0)
	deploy.Add(evidence.Record{Pod: "web-b"}, t0)
	for _, tc := range []struct {
		name       string
		w          *evidence.Window
		wantName   string
		wantPrefix string
	}{
		{"a bare pod", bare, "pressure-janitor.dryrun." + a.Pod.UID, "Dry-run, nothing deleted: would have deleted pod bare (node "},
		{"a workload's pods", deploy, "pressure-janitor.dryrun.uid-d.1782907200",
			"Dry-run, nothing deleted: would have deleted 2 pods of Deployment/web between "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := evidenceEvent(tc.w)
			if err != nil {
				t.Fatalf("evidenceEvent() error: %v", err)
			}
			if ev.Reason != evidence.EventReasonDryRun || ev.Name != tc.wantName || !strings.HasPrefix(ev.Message, tc.wantPrefix) {
				t.Errorf("event %s reason %s message %q; want %s, %s, prefix %q", ev.Name, ev.Reason, ev.Message,
					tc.wantName, evidence.EventReasonDryRun, tc.wantPrefix)
			}
			if !strings.Contains(ev.Annotations[evidence.Annotation], `"dryRun":true`) {
				t.Errorf("annotation %s does not mark the dry run: %s", evidence.Annotation, ev.Annotations[evidence.Annotation])
			}
		})
	}
}
