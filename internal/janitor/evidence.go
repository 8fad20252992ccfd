package janitor

import (
	"log/slog"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/evidence"
)

// Component is the janitor's name: its Events' source, its user agent and its lease's holder name.
const Component = evidence.Component

// NewRecord builds the evidence for a Delete action; owner is the resolved workload (a Deployment
// rather than its ReplicaSet), zero for a bare pod.
func NewRecord(a *Action, owner OwnerRef) evidence.Record {
	p := &a.Pod
	src := string(p.Source)
	if a.RecordFirstSeen {
		src = string(FromFirstSeen)
	}
	r := evidence.Record{
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

// logAttrs are the structured log fields of the evidence line.
func logAttrs(r evidence.Record) []any {
	return []any{
		slog.String("pod", r.Pod), slog.String("namespace", r.Namespace), slog.String("uid", r.UID),
		slog.String("owner", r.Owner), slog.String("node", r.Node), slog.String("phase", r.Phase),
		slog.String("reason", r.Reason), slog.String("message", r.Message),
		slog.Time("evictedAt", r.EvictedAt), slog.String("evictedAtSource", r.TimeSource),
		slog.String("qos", r.QOS), slog.String("requests", evidence.ListText(r.Requests)),
		slog.String("limits", evidence.ListText(r.Limits)),
	}
}

// evidenceEvent builds the evidence Event on the window's owner (or the bare pod), with the window
// as JSON in evidence.Annotation.
func evidenceEvent(w *evidence.Window) (*v1.Event, error) {
	data, err := w.Encode()
	if err != nil {
		return nil, err
	}
	o := w.Owner
	return &v1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name: w.Name(), Namespace: w.Namespace,
			Annotations: map[string]string{evidence.Annotation: data},
		},
		InvolvedObject: v1.ObjectReference{Kind: o.Kind, APIVersion: o.APIVersion, Namespace: w.Namespace, Name: o.Name, UID: types.UID(o.UID)},
		Reason:         w.Reason(), Message: w.Message(), Type: v1.EventTypeNormal,
		Source:         v1.EventSource{Component: Component},
		FirstTimestamp: metav1.NewTime(w.Start), LastTimestamp: metav1.NewTime(w.Last), Count: int32(w.Count),
	}, nil
}
