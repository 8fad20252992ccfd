package cli

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/evidence"
	"github.com/kube-pressure/pressure/internal/threshold"
	"github.com/kube-pressure/pressure/internal/why"
)

// whyPod converts a v1.Pod into the facts the verdict reads.
func whyPod(p *corev1.Pod) why.Pod {
	out := why.Pod{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID), Node: p.Spec.NodeName,
		Phase: string(p.Status.Phase), Reason: p.Status.Reason, Message: p.Status.Message, QOSClass: string(p.Status.QOSClass)}
	if p.Spec.Priority != nil {
		out.Priority = *p.Spec.Priority
	}
	if p.DeletionTimestamp != nil {
		t := p.DeletionTimestamp.UTC()
		out.DeletionTimestamp = &t
	}
	if ref := metav1.GetControllerOf(p); ref != nil {
		out.OwnerKind, out.OwnerName = ref.Kind, ref.Name
	}
	for _, c := range p.Status.Conditions {
		out.Conditions = append(out.Conditions, why.Condition{Type: string(c.Type), Status: string(c.Status),
			Reason: c.Reason, Message: c.Message, At: c.LastTransitionTime.UTC()})
	}
	statuses := map[string]corev1.ContainerStatus{}
	for _, s := range p.Status.ContainerStatuses {
		statuses[s.Name] = s
	}
	for _, c := range p.Spec.Containers {
		wc := why.Container{Name: c.Name, HasLivenessProbe: c.LivenessProbe != nil,
			MemoryRequest: c.Resources.Requests.Memory().Value(), MemoryLimit: c.Resources.Limits.Memory().Value()}
		if s, ok := statuses[c.Name]; ok {
			wc.RestartCount = s.RestartCount
			wc.Terminated = termination(s.State.Terminated)
			wc.LastTerminated = termination(s.LastTerminationState.Terminated)
		}
		out.Containers = append(out.Containers, wc)
	}
	return out
}

func termination(t *corev1.ContainerStateTerminated) *why.Termination {
	if t == nil {
		return nil
	}
	return &why.Termination{Reason: t.Reason, ExitCode: t.ExitCode, Message: t.Message,
		StartedAt: t.StartedAt.UTC(), FinishedAt: t.FinishedAt.UTC()}
}

// whyEvent converts a core/v1 Event.
func whyEvent(e *corev1.Event) why.Event {
	last := e.LastTimestamp.Time
	if last.IsZero() {
		last = e.EventTime.Time
	}
	first := e.FirstTimestamp.Time
	if first.IsZero() {
		first = last
	}
	src := e.Source.Component
	if src == "" {
		src = e.ReportingController
	}
	count := e.Count
	if e.Series != nil {
		count = e.Series.Count
	}
	return why.Event{Namespace: e.Namespace, Name: e.Name, Kind: e.InvolvedObject.Kind, Object: e.InvolvedObject.Name,
		ObjectUID: string(e.InvolvedObject.UID), Type: e.Type, Reason: e.Reason, Message: e.Message, Source: src,
		Host: e.Source.Host, First: first.UTC(), Last: last.UTC(), Count: count, Annotations: e.Annotations}
}

// janitorRecords decodes the janitor's evidence annotation of an EvictedPodDeleted Event (package
// evidence); a record is verified when the Event's name and source are the janitor's.
func janitorRecords(e *corev1.Event) ([]*why.JanitorRecord, error) {
	raw, ok := e.Annotations[evidence.Annotation]
	if !ok {
		return nil, nil
	}
	recs, err := evidence.Decode(raw)
	if err != nil {
		return nil, err
	}
	verified := evidence.Verified(e.Name, e.Source.Component, e.ReportingController)
	out := make([]*why.JanitorRecord, 0, len(recs))
	for _, r := range recs {
		out = append(out, &why.JanitorRecord{Pod: r.Pod, Namespace: r.Namespace, UID: r.UID, Owner: r.Owner, Node: r.Node,
			Phase: r.Phase, Reason: r.Reason, Message: r.Message, EvictedAt: r.EvictedAt.UTC(), EvictedAtSource: r.TimeSource,
			QOS: r.QOS, Requests: r.Requests, Limits: r.Limits, Event: e.Namespace + "/" + e.Name,
			Verified: verified, Source: e.Source.Component})
	}
	return out, nil
}

// recent reports whether an event was last seen at or after since (zero since: always).
func recent(e why.Event, since time.Time) bool { return since.IsZero() || !e.Last.Before(since) }

// nodeFacts builds the node's capacity and kubelet eviction configuration from a snapshot.
func nodeFacts(s *Snapshot) (*why.Node, error) {
	capa, err := capacity(s.Origin[FileNode], s.Node.Status.Capacity, s.Raw[FileNode])
	if err != nil {
		return &why.Node{Name: s.Node.Name}, err
	}
	n := &why.Node{Name: s.Node.Name, Capacity: capa}
	cfg, err := threshold.ParseConfig(s.KubeletConfig.ThresholdInput())
	if err != nil {
		return n, err
	}
	n.Config, n.ConfigSource = &cfg, s.Origin[FileKubeletConfig]+" (now)"
	return n, nil
}
