package avoidwebhook

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Param is one node's avoidance ConfigMap, as the policy sees it through paramRef.
type Param struct {
	// Name is the ConfigMap's name; params apply in name order.
	Name string
	// Node is the pressure.kube-pressure.io/node annotation; HasNode is false without it (the policy's
	// params-name-a-node condition).
	Node    string
	HasNode bool
	// Until maps an owner UID to the RFC 3339 time its avoidance ends (the ConfigMap's data).
	Until map[string]string
}

// Op is one RFC 6902 JSON patch operation.
type Op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// termsPath is the policy's variables.terms.
const termsPath = "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/"

// Patch returns the JSON patch the avoidance policy applies to pod on its creation, given every
// node's params in name order (each applies to the pod as the previous ones left it, as the
// policy's evaluations per param do), and nil when none applies. pod is not changed.
func Patch(pod *corev1.Pod, params []Param) []Op {
	if pod.Spec.NodeName != "" {
		return nil // not-bound-yet
	}
	var spec *corev1.PodSpec
	var ops []Op
	for _, p := range params {
		if !Applies(pod, p) {
			continue
		}
		if spec == nil {
			spec = pod.Spec.DeepCopy()
		}
		ops = append(ops, avoidNode(spec, p.Node)...)
	}
	return ops
}

// Applies reports whether the policy's matchConditions hold for pod and p: the pod is not bound yet, p
// names a node, and the pod's controller (not a DaemonSet) is listed in p with an end later than every
// time in the pod's managedFields (the API server stamps them with the request's time before it calls
// admission; CEL has no clock). An end that is not RFC 3339 applies nothing (the policy's CEL errs,
// and failurePolicy Ignore skips it).
func Applies(pod *corev1.Pod, p Param) bool {
	if pod.Spec.NodeName != "" || !p.HasNode || len(pod.ManagedFields) == 0 {
		return false
	}
	for _, r := range pod.OwnerReferences {
		if r.Controller == nil || !*r.Controller || r.Kind == "DaemonSet" {
			continue
		}
		end, ok := p.Until[string(r.UID)]
		if !ok {
			continue
		}
		if before(pod, end) {
			return true
		}
	}
	return false
}

// before reports whether every managedFields entry has a time and it is before end.
func before(pod *corev1.Pod, end string) bool {
	until, err := time.Parse(time.RFC3339, end)
	if err != nil {
		return false
	}
	for _, f := range pod.ManagedFields {
		if f.Time == nil || !f.Time.Time.Before(until) {
			return false
		}
	}
	return true
}

// avoidNode is the policy's mutation for one node: it changes spec as the returned patch does.
func avoidNode(spec *corev1.PodSpec, node string) []Op {
	field := func() corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{node}}
	}
	required := func() *corev1.NodeSelector {
		return &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{field()}}}}
	}
	switch {
	case spec.Affinity == nil:
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required()}}
		return []Op{{Op: "add", Path: "/spec/affinity", Value: spec.Affinity.DeepCopy()}}
	case spec.Affinity.NodeAffinity == nil:
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required()}
		return []Op{{Op: "add", Path: "/spec/affinity/nodeAffinity", Value: spec.Affinity.NodeAffinity.DeepCopy()}}
	case spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil:
		spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = required()
		return []Op{{Op: "add", Path: "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution", Value: required()}}
	}
	terms := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	ops := make([]Op, 0, len(terms))
	for i := range terms {
		t := &terms[i]
		path := termsPath + strconv.Itoa(i)
		if len(t.MatchFields) > 0 {
			t.MatchFields = append(t.MatchFields, field())
			ops = append(ops, Op{Op: "add", Path: path + "/matchFields/-", Value: field()})
			continue
		}
		t.MatchFields = []corev1.NodeSelectorRequirement{field()}
		ops = append(ops, Op{Op: "replace", Path: path, Value: t.DeepCopy()})
	}
	return ops
}
