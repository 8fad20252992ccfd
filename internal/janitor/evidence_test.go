package janitor

import (
	"encoding/json"
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

func TestEventIsOnTheResolvedOwnerWithTheRecordAsJSON(t *testing.T) {
	a := Select(infos(evictedPod("shop", "p", t0, ownedBy("ReplicaSet", "web-7d9"))), t0.Add(time.Hour), defaultPolicy())[0]
	deploy := OwnerRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-d"}
	rec := NewRecord(&a, deploy)
	ev, err := NewEvent(rec, deploy, "shop", t0.Add(time.Hour))
	if err != nil {
		t.Fatalf("NewEvent() error: %v", err)
	}
	gotRef := ev.InvolvedObject
	wantRef := v1.ObjectReference{Kind: "Deployment", APIVersion: "apps/v1", Namespace: "shop", Name: "web", UID: "uid-d"}
	if diff := cmp.Diff(gotRef, wantRef); diff != "" {
		t.Errorf("InvolvedObject (-got +want):\n%s", diff)
	}
	if ev.Name != EvidenceEventName(rec.UID) || ev.Reason != EventReason || ev.Source.Component != Component {
		t.Errorf("event name %q reason %q source %q; want %q, %q, %q", ev.Name, ev.Reason, ev.Source.Component,
			EvidenceEventName(rec.UID), EventReason, Component)
	}
	var back Record
	if err := json.Unmarshal([]byte(ev.Annotations[AnnotationEvidence]), &back); err != nil {
		t.Fatalf("evidence annotation is not JSON: %v", err)
	}
	if diff := cmp.Diff(back, rec); diff != "" {
		t.Errorf("evidence annotation round trip (-got +want):\n%s", diff)
	}
}

func TestEventOfABarePodIsOnThePod(t *testing.T) {
	a := Select(infos(evictedPod("shop", "bare", t0)), t0.Add(time.Hour), defaultPolicy())[0]
	rec := NewRecord(&a, OwnerRef{})
	ev, err := NewEvent(rec, OwnerRef{}, "shop", t0)
	if err != nil {
		t.Fatalf("NewEvent() error: %v", err)
	}
	if ev.InvolvedObject.Kind != "Pod" || ev.InvolvedObject.Name != "bare" || rec.Owner != "" {
		t.Errorf("bare pod evidence on %s/%s owner %q; want Pod/bare and no owner", ev.InvolvedObject.Kind, ev.InvolvedObject.Name, rec.Owner)
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
