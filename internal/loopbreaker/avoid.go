package loopbreaker

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kube-pressure/pressure/internal/policy"
)

// The avoidance parameters: one ConfigMap per node in the agent's namespace, named
// AvoidanceNamePrefix + node, labelled AvoidanceLabel=true (the MutatingAdmissionPolicyBinding selects
// them), annotated with the node (AvoidanceNodeAnnotation), owned by the Node object (deleted with it),
// and mapping each avoiding owner's UID to the RFC 3339 time its avoidance ends.
const (
	AvoidanceLabel          = "pressure.kube-pressure.io/avoidance"
	AvoidanceNodeAnnotation = "pressure.kube-pressure.io/node"
	DefaultAvoidancePrefix  = "pressure-avoid-"
	// AvoidanceFieldManager is the server-side apply field manager of the agent's writes.
	AvoidanceFieldManager = "pressure-agent"
)

// AvoidanceName returns the name of node's avoidance ConfigMap, or an error naming the node when the
// name would not be a valid object name.
func AvoidanceName(prefix, node string) (string, error) {
	name := prefix + node
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return "", fmt.Errorf("avoidance configmap name %q (prefix %q, node %q): %v", name, prefix, node, msgs)
	}
	return name, nil
}

// AvoidanceData is the ConfigMap data of the avoidances: owner UID -> end (RFC 3339, UTC, seconds
// rounded up so an avoidance never ends early).
func AvoidanceData(as []policy.Avoidance) map[string]string {
	out := make(map[string]string, len(as))
	for _, a := range as {
		until := a.Until.UTC()
		if t := until.Truncate(time.Second); !t.Equal(until) {
			until = t.Add(time.Second)
		}
		out[a.Owner.UID] = until.Format(time.RFC3339)
	}
	return out
}

// AvoidanceParams writes the node's avoidance ConfigMap with server-side apply (field manager
// AvoidanceFieldManager, forced): the data is exactly the avoidances given, an empty list leaves an
// empty ConfigMap. With DryRun it never writes.
type AvoidanceParams struct {
	Client    kubernetes.Interface
	Namespace string
	// Prefix is the name prefix (DefaultAvoidancePrefix when empty).
	Prefix string
	Node   string
	DryRun bool

	nodeUID types.UID
}

// Write implements AvoidanceWriter.
func (p *AvoidanceParams) Write(ctx context.Context, as []policy.Avoidance) error {
	if p.DryRun {
		return nil
	}
	prefix := p.Prefix
	if prefix == "" {
		prefix = DefaultAvoidancePrefix
	}
	name, err := AvoidanceName(prefix, p.Node)
	if err != nil {
		return err
	}
	if p.nodeUID == "" {
		n, err := p.Client.CoreV1().Nodes().Get(ctx, p.Node, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get node %s for the avoidance configmap's owner: %w", p.Node, err)
		}
		p.nodeUID = n.UID
	}
	cm := corev1ac.ConfigMap(name, p.Namespace).
		WithLabels(map[string]string{AvoidanceLabel: "true"}).
		WithAnnotations(map[string]string{AvoidanceNodeAnnotation: p.Node}).
		WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("Node").WithName(p.Node).WithUID(p.nodeUID)).
		WithData(AvoidanceData(as))
	_, err = p.Client.CoreV1().ConfigMaps(p.Namespace).Apply(ctx, cm, metav1.ApplyOptions{FieldManager: AvoidanceFieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("apply avoidance configmap %s/%s: %w", p.Namespace, name, err)
	}
	return nil
}
