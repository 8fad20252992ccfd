package actuate

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
)

// Component is the event source component of the agent.
const Component = "pressure-agent"

// Event reasons (docs/events.md).
const (
	// ReasonPressureEviction (Warning, pod): the agent evicted the pod.
	ReasonPressureEviction = "PressureEviction"
	// ReasonPressureEvictionDryRun (Warning, pod): dry-run, the agent would have evicted the pod.
	ReasonPressureEvictionDryRun = "PressureEvictionDryRun"
	// ReasonPressureEvictionFailed (Warning, pod): every allowed rung failed or was refused.
	ReasonPressureEvictionFailed = "PressureEvictionFailed"
	// ReasonNodePressureStarted (Warning, node): a threshold of ours is met.
	ReasonNodePressureStarted = "NodePressureStarted"
	// ReasonNodePressureEnded (Normal, node): no threshold of ours is met any more.
	ReasonNodePressureEnded = "NodePressureEnded"
	// ReasonEvictionLoop (Warning, owner): a replacement of a pod evicted here came back and was evicted
	// again; the owner's avoidance of the node is escalated.
	ReasonEvictionLoop = "EvictionLoopDetected"
	// ReasonLoopTaintAdded / ReasonLoopTaintRemoved (Normal, node): the pressure taint changed.
	ReasonLoopTaintAdded   = "EvictionLoopTaintAdded"
	ReasonLoopTaintRemoved = "EvictionLoopTaintRemoved"
)

// Event annotations the agent adds to the pod events, next to the decision's own (offending_containers...).
const (
	AnnotationSignal    = "pressure.kube-pressure.io/signal"
	AnnotationRung      = "pressure.kube-pressure.io/rung"
	AnnotationRank      = "pressure.kube-pressure.io/rank"
	AnnotationDecidedBy = "pressure.kube-pressure.io/decided-by"
)

// NewEventRecorder starts a client-go event broadcaster that writes core/v1 Events through client and
// returns a recorder for the agent on node, and a function that flushes and stops the broadcaster. The
// correlator (aggregation and spam filter) runs on clk; client-go stamps the events themselves with its
// own wall clock.
func NewEventRecorder(ctx context.Context, client kubernetes.Interface, clk clock.PassiveClock, node string) (record.EventRecorderLogger, func()) {
	// Not cut by ctx: an event of an eviction already made must still be written when the agent is
	// stopping; the returned function stops the broadcaster once the shell is done.
	b := record.NewBroadcaster(record.WithContext(context.WithoutCancel(ctx)), record.WithCorrelatorOptions(record.CorrelatorOptions{Clock: clk}))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	rec := b.NewRecorder(scheme.Scheme, v1.EventSource{Component: Component, Host: node})
	return rec, b.Shutdown
}

// Events writes the agent's events. Node is the node the agent runs on.
type Events struct {
	Recorder record.EventRecorder
	Node     string
	// TaintKey is the loop breaker's taint key named in messages; empty means loopbreaker.TaintKey.
	TaintKey string
}

func (e *Events) taintKey() string {
	if e.TaintKey == "" {
		return loopbreaker.TaintKey
	}
	return e.TaintKey
}

func podObject(p PodRef) runtime.Object {
	return &v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name, UID: p.UID}
}

// nodeObject is the node's reference as the kubelet writes it (the UID is the node name).
func (e *Events) nodeObject() runtime.Object {
	return &v1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: e.Node, UID: types.UID(e.Node)}
}

// Evicted records the PressureEviction event of a request the ladder carried out.
func (e *Events) Evicted(req Request, res Result) {
	msg := fmt.Sprintf("Evicted by %s via %s: %s", Component, res.Rung, describe(req))
	e.Recorder.AnnotatedEventf(podObject(req.Pod), annotations(req, res.Rung), v1.EventTypeWarning, ReasonPressureEviction, "%s", msg)
}

// WouldEvict records the dry-run event of a request.
func (e *Events) WouldEvict(req Request) {
	msg := fmt.Sprintf("Would evict (dry-run): %s", describe(req))
	e.Recorder.AnnotatedEventf(podObject(req.Pod), annotations(req, RungNone), v1.EventTypeWarning, ReasonPressureEvictionDryRun, "%s", msg)
}

// EvictionFailed records that the ladder could not evict the pod.
func (e *Events) EvictionFailed(req Request, res Result) {
	cause := string(res.Outcome)
	if err := res.Err(); err != nil {
		cause += ": " + err.Error()
	}
	msg := fmt.Sprintf("Could not evict via %s (%s): %s", res.Rung, cause, describe(req))
	e.Recorder.AnnotatedEventf(podObject(req.Pod), annotations(req, res.Rung), v1.EventTypeWarning, ReasonPressureEvictionFailed, "%s", msg)
}

// PressureStarted records on the node that a threshold of signal is met.
func (e *Events) PressureStarted(signal, observed, threshold string) {
	e.Recorder.Eventf(e.nodeObject(), v1.EventTypeWarning, ReasonNodePressureStarted,
		"Node pressure started: %s observed %s, threshold %s", signal, observed, threshold)
}

// PressureEnded records on the node that no threshold of signal is met any more.
func (e *Events) PressureEnded(signal, observed string) {
	e.Recorder.Eventf(e.nodeObject(), v1.EventTypeNormal, ReasonNodePressureEnded,
		"Node pressure ended: %s observed %s", signal, observed)
}

// EvictionLoop records on the owner that a replacement of its pod evicted here was evicted again.
func (e *Events) EvictionLoop(l policy.EvictionLoop) {
	ref := &v1.ObjectReference{Kind: l.Owner.Kind, APIVersion: l.Owner.APIVersion, Namespace: l.Owner.Namespace,
		Name: l.Owner.Name, UID: types.UID(l.Owner.UID)}
	e.Recorder.Eventf(ref, v1.EventTypeWarning, ReasonEvictionLoop,
		"Pod %s evicted from node %s for %s %s after the previous eviction of this %s (%d evictions within the window); its new pods avoid node %s until %s",
		l.Pod.Name, e.Node, l.Signal, l.Since.Round(time.Second), l.Owner.Kind, l.Evictions, e.Node, l.Until.UTC().Format(time.RFC3339))
}

// TaintChanged records on the node that the loop breaker's taint was added (value = signal) or removed.
func (e *Events) TaintChanged(added bool, value string) {
	if added {
		e.Recorder.Eventf(e.nodeObject(), v1.EventTypeNormal, ReasonLoopTaintAdded, "Added taint %s=%s:NoSchedule", e.taintKey(), value)
		return
	}
	e.Recorder.Eventf(e.nodeObject(), v1.EventTypeNormal, ReasonLoopTaintRemoved, "Removed taint %s:NoSchedule", e.taintKey())
}

// describe is the common part of the pod event messages.
func describe(req Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "signal %s observed %s, threshold %s", req.Signal, req.Observed, req.Threshold)
	if req.Hard {
		b.WriteString(" (hard)")
	} else {
		b.WriteString(" (soft)")
	}
	if req.Rank > 0 {
		fmt.Fprintf(&b, ", rank %d", req.Rank)
	}
	if req.DecidedBy != "" {
		fmt.Fprintf(&b, " decided by %s", req.DecidedBy)
	}
	fmt.Fprintf(&b, ", grace %ds.", req.GracePeriodSeconds)
	if req.Message != "" {
		b.WriteString(" " + strings.TrimSpace(req.Message))
	}
	return b.String()
}

func annotations(req Request, rung Rung) map[string]string {
	out := make(map[string]string, len(req.Annotations)+4)
	for k, v := range req.Annotations {
		out[k] = v
	}
	out[AnnotationSignal] = req.Signal
	if rung != RungNone {
		out[AnnotationRung] = string(rung)
	}
	if req.Rank > 0 {
		out[AnnotationRank] = fmt.Sprint(req.Rank)
	}
	if req.DecidedBy != "" {
		out[AnnotationDecidedBy] = req.DecidedBy
	}
	return out
}
