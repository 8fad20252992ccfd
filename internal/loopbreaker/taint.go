package loopbreaker

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// TaintKey is the loop breaker's taint (effect NoSchedule, value = the signal that caused the loop).
const TaintKey = "pressure.kube-pressure.io/evicting"

// Tainter adds, refreshes and removes our NoSchedule taint on the node. Every change is a JSON merge
// patch of spec.taints guarded by the resourceVersion the change was computed from, retried on
// conflict, so a concurrent change of other taints is never lost; other taints are never removed or
// modified. With DryRun it only computes.
type Tainter struct {
	Client kubernetes.Interface
	Node   string
	// Key is the taint key; empty means TaintKey.
	Key    string
	DryRun bool
}

func (t *Tainter) key() string {
	if t.Key == "" {
		return TaintKey
	}
	return t.Key
}

// Ensure makes our taint present with value. It reports whether the node changed (false when the
// taint was already there with that value).
func (t *Tainter) Ensure(ctx context.Context, value string) (bool, error) {
	return t.update(ctx, func(ts []v1.Taint) ([]v1.Taint, bool) { return WithTaint(ts, t.key(), value) })
}

// Remove removes our taint. It reports whether the node changed.
func (t *Tainter) Remove(ctx context.Context) (bool, error) {
	return t.update(ctx, func(ts []v1.Taint) ([]v1.Taint, bool) { return WithoutTaint(ts, t.key()) })
}

func (t *Tainter) update(ctx context.Context, change func([]v1.Taint) ([]v1.Taint, bool)) (bool, error) {
	changed := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := t.Client.CoreV1().Nodes().Get(ctx, t.Node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		taints, ok := change(n.Spec.Taints)
		if changed = ok; !ok || t.DryRun {
			return nil
		}
		patch, err := taintPatch(n.ResourceVersion, taints)
		if err != nil {
			return err
		}
		_, err = t.Client.CoreV1().Nodes().Patch(ctx, t.Node, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("update taint %s on node %s: %w", t.key(), t.Node, err)
	}
	return changed, nil
}

func taintPatch(resourceVersion string, taints []v1.Taint) ([]byte, error) {
	if taints == nil {
		taints = []v1.Taint{}
	}
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": resourceVersion},
		"spec":     map[string]any{"taints": taints},
	})
}

// WithTaint returns taints with key=value:NoSchedule present (replacing a NoSchedule taint of that key
// with another value) and whether that changed anything. Other taints keep their order and content;
// the input is not modified.
func WithTaint(taints []v1.Taint, key, value string) ([]v1.Taint, bool) {
	out := make([]v1.Taint, 0, len(taints)+1)
	found, changed := false, false
	for _, tn := range taints {
		if tn.Key == key && tn.Effect == v1.TaintEffectNoSchedule {
			found = true
			if tn.Value != value {
				tn.Value, changed = value, true
			}
		}
		out = append(out, tn)
	}
	if !found {
		out = append(out, v1.Taint{Key: key, Value: value, Effect: v1.TaintEffectNoSchedule})
		changed = true
	}
	return out, changed
}

// WithoutTaint returns taints without our key's NoSchedule taint and whether it was there.
func WithoutTaint(taints []v1.Taint, key string) ([]v1.Taint, bool) {
	out := make([]v1.Taint, 0, len(taints))
	for _, tn := range taints {
		if tn.Key == key && tn.Effect == v1.TaintEffectNoSchedule {
			continue
		}
		out = append(out, tn)
	}
	return out, len(out) != len(taints)
}
