package janitor

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

func TestRecordCarriesTheEvidenceOfAnEvictedPod(t *testing.T) {
	pod := evictedPod("shop", "web-7d9-abc", t0, ownedBy("ReplicaSet", "web-7d9"))
	a := Select(infos(pod), t0.Add(time.Hour), defaultPolicy())[0]
	deploy := OwnerRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-d"}
	got := NewRecord(&a, deploy)
	want := Record{
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
	w := NewWindow("shop", deploy, t0)
	var recs []Record
	for i, name := range []string{"web-a", "web-b", "web-c"} {
		a := Select(infos(evictedPod("shop", name, t0, ownedBy("ReplicaSet", "web-7d9"))), t0.Add(time.Hour), defaultPolicy())[0]
		rec := NewRecord(&a, deploy)
		recs = append(recs, rec)
		w.Add(rec, t0.Add(time.Duration(i)*time.Second))
	}
	ev, err := w.Event()
	if err != nil {
		t.Fatalf("Event() error: %v", err)
	}
	gotRef := ev.InvolvedObject
	wantRef := v1.ObjectReference{Kind: "Deployment", APIVersion: "apps/v1", Namespace: "shop", Name: "web", UID: "uid-d"}
	if diff := cmp.Diff(gotRef, wantRef); diff != "" {
		t.Errorf("InvolvedObject (-got +want):\n%s", diff)
	}
	if want := "pressure-janitor.uid-d.1782907200"; ev.Name != want || ev.Reason != EventReason || ev.Source.Component != Component || ev.Count != 3 {
		t.Errorf("event name %q reason %q source %q count %d; want %q, %q, %q, 3", ev.Name, ev.Reason, ev.Source.Component, ev.Count,
			want, EventReason, Component)
	}
	if !ev.FirstTimestamp.Time.Equal(t0) || !ev.LastTimestamp.Time.Equal(t0.Add(2*time.Second)) {
		t.Errorf("event timestamps %v..%v; want %v..%v", ev.FirstTimestamp, ev.LastTimestamp, t0, t0.Add(2*time.Second))
	}
	wantPrefix := "Deleted 3 pods of Deployment/web between 2026-07-01T12:00:00Z and 2026-07-01T12:00:02Z (web-a, web-b, web-c); latest: Deleted pod web-c "
	if !strings.HasPrefix(ev.Message, wantPrefix) {
		t.Errorf("message %q; want prefix %q", ev.Message, wantPrefix)
	}
	var back Window
	if err := json.Unmarshal([]byte(ev.Annotations[AnnotationEvidence]), &back); err != nil {
		t.Fatalf("evidence annotation is not JSON: %v", err)
	}
	if diff := cmp.Diff(back.Pods, recs); diff != "" || back.Count != 3 || back.OwnerName != "Deployment/web" {
		t.Errorf("evidence annotation: count %d owner %q, records (-got +want):\n%s", back.Count, back.OwnerName, diff)
	}
}

func TestWindowKeepsTheFirstRecordsAndCountsAll(t *testing.T) {
	w := NewWindow("shop", OwnerRef{Kind: "Job", Name: "j", UID: "uid-j"}, t0)
	for i := range maxWindowRecords + 5 {
		w.Add(Record{Pod: fmt.Sprintf("p-%02d", i)}, t0)
	}
	if w.Count != maxWindowRecords+5 || len(w.Pods) != maxWindowRecords {
		t.Errorf("count %d, %d records; want %d, %d", w.Count, len(w.Pods), maxWindowRecords+5, maxWindowRecords)
	}
	if msg := w.Message(); !strings.Contains(msg, "(p-00, p-01, p-02, p-03, p-04 and 20 more)") {
		t.Errorf("message %q does not name the first five and count the rest", msg)
	}
}

func TestEventOfABarePodIsOnThePodWithTheOldMessage(t *testing.T) {
	a := Select(infos(evictedPod("shop", "bare", t0)), t0.Add(time.Hour), defaultPolicy())[0]
	rec := NewRecord(&a, OwnerRef{})
	w := NewWindow("shop", OwnerRef{APIVersion: "v1", Kind: "Pod", Name: "bare", UID: a.Pod.UID}, t0)
	w.Add(rec, t0)
	ev, err := w.Event()
	if err != nil {
		t.Fatalf("Event() error: %v", err)
	}
	if ev.InvolvedObject.Kind != "Pod" || ev.InvolvedObject.Name != "bare" || rec.Owner != "" || ev.Name != EvidenceEventName(a.Pod.UID) {
		t.Errorf("bare pod evidence %s on %s/%s owner %q; want %s on Pod/bare and no owner", ev.Name, ev.InvolvedObject.Kind,
			ev.InvolvedObject.Name, rec.Owner, EvidenceEventName(a.Pod.UID))
	}
	if ev.Message != rec.EventMessage() {
		t.Errorf("message %q; want the record's %q", ev.Message, rec.EventMessage())
	}
}

func TestEventMessageIsCappedAt1024Bytes(t *testing.T) {
	a := Select(infos(evictedPod("a", "p", t0, func(p *v1.Pod) { p.Status.Message = strings.Repeat("x", 5000) })),
		t0.Add(time.Hour), defaultPolicy())[0]
	msg := NewRecord(&a, OwnerRef{}).EventMessage()
	if len(msg) != maxEventMessage || !strings.HasSuffix(msg, "...") {
		t.Errorf("message length %d suffix %q; want %d ending in ...", len(msg), msg[len(msg)-3:], maxEventMessage)
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
	bare := NewWindow("shop", OwnerRef{APIVersion: "v1", Kind: "Pod", Name: "bare", UID: a.Pod.UID}, t0)
	bare.DryRun = true
	bare.Add(rec, t0)
	deploy := NewWindow("shop", OwnerRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-d"}, t0)
	deploy.DryRun = true
	deploy.Add(Record{Pod: "web-a"}, t0)
	deploy.Add(Record{Pod: "web-b"}, t0)
	for _, tc := range []struct {
		name       string
		w          *Window
		wantName   string
		wantPrefix string
	}{
		{"a bare pod", bare, "pressure-janitor.dryrun." + a.Pod.UID, "Dry-run, nothing deleted: would have deleted pod bare (node "},
		{"a workload's pods", deploy, "pressure-janitor.dryrun.uid-d.1782907200",
			"Dry-run, nothing deleted: would have deleted 2 pods of Deployment/web between "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := tc.w.Event()
			if err != nil {
				t.Fatalf("Event() error: %v", err)
			}
			if ev.Reason != EventReasonDryRun || ev.Name != tc.wantName || !strings.HasPrefix(ev.Message, tc.wantPrefix) {
				t.Errorf("event %s reason %s message %q; want %s, %s, prefix %q", ev.Name, ev.Reason, ev.Message,
					tc.wantName, EventReasonDryRun, tc.wantPrefix)
			}
			if !strings.Contains(ev.Annotations[AnnotationEvidence], `"dryRun":true`) {
				t.Errorf("annotation %s does not mark the dry run: %s", AnnotationEvidence, ev.Annotations[AnnotationEvidence])
			}
		})
	}
}
