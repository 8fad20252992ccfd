package janitor

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Evidence Event constants.
const (
	// EventReason is the reason of the Event written on the owner before a pod is deleted.
	EventReason = "EvictedPodDeleted"
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

// formatList renders a map sorted by key: "cpu=100m,memory=128Mi".
func formatList(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ",")
}

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

// EvidenceEventName is deterministic per pod UID, so writing the evidence twice (a retry, a new
// leader) creates one Event.
func EvidenceEventName(podUID string) string { return "pressure-janitor." + podUID }

// NewEvent builds the evidence Event on the owner (or on the pod itself for a bare pod).
func NewEvent(r Record, owner OwnerRef, namespace string, now time.Time) (*v1.Event, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode evidence of pod %s/%s: %w", r.Namespace, r.Pod, err)
	}
	obj := v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: namespace, Name: r.Pod, UID: types.UID(r.UID)}
	if owner.Kind != "" {
		obj = v1.ObjectReference{Kind: owner.Kind, APIVersion: owner.APIVersion, Namespace: namespace, Name: owner.Name, UID: types.UID(owner.UID)}
	}
	ts := metav1.NewTime(now)
	return &v1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name: EvidenceEventName(r.UID), Namespace: namespace,
			Annotations: map[string]string{AnnotationEvidence: string(data)},
		},
		InvolvedObject: obj, Reason: EventReason, Message: r.EventMessage(), Type: v1.EventTypeNormal,
		Source: v1.EventSource{Component: Component}, FirstTimestamp: ts, LastTimestamp: ts, Count: 1,
	}, nil
}
