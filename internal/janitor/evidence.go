package janitor

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/why"
)

// Evidence Event constants.
const (
	// EventReason is the reason of the Event written on the owner before a pod is deleted.
	EventReason = "EvictedPodDeleted"
	// EventReasonDryRun is the reason of the same Event in dry-run: the pods listed would have been
	// deleted and were not. `kubectl pressure why` reads EventReason only.
	EventReasonDryRun = "EvictedPodDeletedDryRun"
	// AnnotationEvidence on that Event holds the Record as JSON.
	AnnotationEvidence = "pressure.kube-pressure.io/evidence"
	// Component is the Event source and the log's component.
	Component = "pressure-janitor"
	// maxEventMessage keeps the Event message within the events API note limit.
	maxEventMessage = 1024
)

// Record is the evidence kept about a deleted pod.
type Record struct {
	Pod        string            `json:"pod"`
	Namespace  string            `json:"namespace"`
	UID        string            `json:"uid"`
	Owner      string            `json:"owner,omitempty"` // Kind/name of the workload the Event is on
	Node       string            `json:"node,omitempty"`
	Phase      string            `json:"phase"`
	Reason     string            `json:"reason,omitempty"`
	Message    string            `json:"message,omitempty"`
	EvictedAt  time.Time         `json:"evictedAt"`
	TimeSource string            `json:"evictedAtSource"`
	QOS        string            `json:"qos,omitempty"`
	Requests   map[string]string `json:"requests,omitempty"`
	Limits     map[string]string `json:"limits,omitempty"`
}

// NewRecord builds the evidence for a Delete action; owner is the resolved workload (a Deployment
// rather than its ReplicaSet), zero for a bare pod.
func NewRecord(a *Action, owner OwnerRef) Record {
	p := &a.Pod
	src := string(p.Source)
	if a.RecordFirstSeen {
		src = string(FromFirstSeen)
	}
	r := Record{
		Pod: p.Name, Namespace: p.Namespace, UID: p.UID, Node: p.Node,
		Phase: string(p.Phase), Reason: p.Reason, Message: strings.TrimSpace(p.Message),
		EvictedAt: a.EvictedAt.UTC(), TimeSource: src, QOS: string(p.QOS),
		Requests: quantities(p.Requests), Limits: quantities(p.Limits),
	}
	if owner.Kind != "" {
		r.Owner = owner.Kind + "/" + owner.Name
	}
	return r
}

func quantities(l v1.ResourceList) map[string]string {
	if len(l) == 0 {
		return nil
	}
	m := make(map[string]string, len(l))
	for name, q := range l {
		m[string(name)] = q.String()
	}
	return m
}

// formatList renders a map sorted by key: "cpu=100m,memory=128Mi" (the format why reads back).
func formatList(m map[string]string) string { return why.ListText(m) }

// EventMessage is the one-paragraph text `kubectl describe` shows.
func (r Record) EventMessage() string {
	msg := fmt.Sprintf("Deleted pod %s (node %s, %s/%s at %s, qos %s, requests %s, limits %s): %s",
		r.Pod, orDash(r.Node), r.Phase, orDash(r.Reason), r.EvictedAt.Format(time.RFC3339), orDash(r.QOS),
		orDash(formatList(r.Requests)), orDash(formatList(r.Limits)), orDash(r.Message))
	if len(msg) > maxEventMessage {
		msg = msg[:maxEventMessage-3] + "..."
	}
	return msg
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// LogAttrs are the structured log fields of the evidence line.
func (r Record) LogAttrs() []any {
	return []any{
		slog.String("pod", r.Pod), slog.String("namespace", r.Namespace), slog.String("uid", r.UID),
		slog.String("owner", r.Owner), slog.String("node", r.Node), slog.String("phase", r.Phase),
		slog.String("reason", r.Reason), slog.String("message", r.Message),
		slog.Time("evictedAt", r.EvictedAt), slog.String("evictedAtSource", r.TimeSource),
		slog.String("qos", r.QOS), slog.String("requests", formatList(r.Requests)),
		slog.String("limits", formatList(r.Limits)),
	}
}

// EvidenceEventName is the name of the Event of a bare pod, and the prefix of an owner's Events:
// deterministic, so writing the same Event twice (a retry, a new leader) creates one.
func EvidenceEventName(uid string) string { return "pressure-janitor." + uid }

// DryRunEventName is the name of a dry-run Event of a bare pod, and the prefix of an owner's: its own
// name, so a dry-run report never takes the name of the evidence of a later real deletion. Below
// pressure-janitor., which the chart's evidence policy leaves to the janitor alone.
func DryRunEventName(uid string) string { return "pressure-janitor.dryrun." + uid }

// maxWindowRecords bounds the records kept in one Event's annotation; the count covers all.
const maxWindowRecords = 20

// Window is the evidence of the pods of one owner deleted within one event window.
type Window struct {
	Namespace string    `json:"namespace"`
	Owner     OwnerRef  `json:"-"`
	OwnerName string    `json:"owner"` // Kind/name
	Start     time.Time `json:"firstDeletion"`
	Last      time.Time `json:"lastDeletion"`
	Count     int       `json:"count"`
	Pods      []Record  `json:"pods"` // the first maxWindowRecords
	// DryRun marks the report of a dry run: nothing was deleted.
	DryRun bool `json:"dryRun,omitempty"`
}

// NewWindow opens a window for owner (a workload, or the pod itself for a bare pod) at now.
func NewWindow(namespace string, owner OwnerRef, now time.Time) *Window {
	return &Window{Namespace: namespace, Owner: owner, OwnerName: owner.Kind + "/" + owner.Name, Start: now.UTC()}
}

// Add counts a deleted pod.
func (w *Window) Add(r Record, now time.Time) {
	w.Count++
	w.Last = now.UTC()
	if len(w.Pods) < maxWindowRecords {
		w.Pods = append(w.Pods, r)
	}
}

// Name is the Event's name: per bare pod, or per owner and window start.
func (w *Window) Name() string {
	name := EvidenceEventName
	if w.DryRun {
		name = DryRunEventName
	}
	if w.Owner.Kind == "Pod" {
		return name(w.Owner.UID)
	}
	return fmt.Sprintf("%s.%d", name(w.Owner.UID), w.Start.Unix())
}

// dryRunPrefix starts the message of a dry-run Event, before "would have deleted ...".
const dryRunPrefix = "Dry-run, nothing deleted: would have "

// Message is what kubectl describe shows: one pod's full record, or the count, the first names
// and the latest record.
func (w *Window) Message() string {
	if len(w.Pods) == 0 {
		return ""
	}
	latest := w.Pods[len(w.Pods)-1]
	msg := latest.EventMessage()
	if w.Count > 1 {
		names := make([]string, 0, 5)
		for _, r := range w.Pods[:min(5, len(w.Pods))] {
			names = append(names, r.Pod)
		}
		more := ""
		if w.Count > len(names) {
			more = fmt.Sprintf(" and %d more", w.Count-len(names))
		}
		msg = fmt.Sprintf("Deleted %d pods of %s between %s and %s (%s%s); latest: %s", w.Count, w.OwnerName,
			w.Start.Format(time.RFC3339), w.Last.Format(time.RFC3339), strings.Join(names, ", "), more, msg)
	}
	if w.DryRun {
		msg = dryRunPrefix + "d" + strings.TrimPrefix(msg, "D")
	}
	if len(msg) > maxEventMessage {
		msg = msg[:maxEventMessage-3] + "..."
	}
	return msg
}

// Event builds the evidence Event on the owner (or the bare pod), with the window as JSON in
// AnnotationEvidence.
func (w *Window) Event() (*v1.Event, error) {
	data, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encode evidence of %s in namespace %s: %w", w.OwnerName, w.Namespace, err)
	}
	o := w.Owner
	return &v1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name: w.Name(), Namespace: w.Namespace,
			Annotations: map[string]string{AnnotationEvidence: string(data)},
		},
		InvolvedObject: v1.ObjectReference{Kind: o.Kind, APIVersion: o.APIVersion, Namespace: w.Namespace, Name: o.Name, UID: types.UID(o.UID)},
		Reason:         w.reason(), Message: w.Message(), Type: v1.EventTypeNormal,
		Source:         v1.EventSource{Component: Component},
		FirstTimestamp: metav1.NewTime(w.Start), LastTimestamp: metav1.NewTime(w.Last), Count: int32(w.Count),
	}, nil
}

// reason is EventReason, or EventReasonDryRun for a dry run's report.
func (w *Window) reason() string {
	if w.DryRun {
		return EventReasonDryRun
	}
	return EventReason
}
