package evidence

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Names on the evidence Event.
const (
	// EventReason is the reason of the Event written on the owner after a pod is deleted.
	EventReason = "EvictedPodDeleted"
	// EventReasonDryRun is the reason of the same Event in dry-run: the pods listed would have been
	// deleted and were not. `kubectl pressure why` reads EventReason only.
	EventReasonDryRun = "EvictedPodDeletedDryRun"
	// Annotation on that Event holds the Window as JSON.
	Annotation = "pressure.kube-pressure.io/evidence"
	// Component is the Event's source: pressure-janitor.
	Component = "pressure-janitor"
	// MaxMessage keeps the Event message within the events API note limit.
	MaxMessage = 1024
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

// EventMessage is the one-paragraph text `kubectl describe` shows.
func (r Record) EventMessage() string {
	return capMessage(fmt.Sprintf("Deleted pod %s (node %s, %s/%s at %s, qos %s, requests %s, limits %s): %s",
		r.Pod, orDash(r.Node), r.Phase, orDash(r.Reason), r.EvictedAt.Format(time.RFC3339), orDash(r.QOS),
		orDash(ListText(r.Requests)), orDash(ListText(r.Limits)), orDash(r.Message)))
}

// ListText renders a map sorted by key: "cpu=100m,memory=128Mi", the format of a Record's requests
// and limits in the Event message and the log line.
func ListText(m map[string]string) string {
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

func capMessage(msg string) string {
	if len(msg) > MaxMessage {
		return msg[:MaxMessage-3] + "..."
	}
	return msg
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
