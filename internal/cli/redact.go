package cli

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
)

// keptAnnotations are the only pod annotations a redacted snapshot keeps: the kubelet's critical pod
// markers (kubelet IsCriticalPod: static and mirror pods). Everything else the decision reads is in
// the spec and status fields RedactPod keeps.
var keptAnnotations = []string{"kubernetes.io/config.source", "kubernetes.io/config.mirror"}

// RedactPod returns the part of pod an eviction decision reads: name, namespace, uid, owner
// references, the critical pod annotations; per container the name, resources, restart policy
// (sidecars); priority, tolerations, grace period, pod resources and overhead; volumes by kind
// (emptyDir with its medium and size limit, hostPath, gitRepo and configMap without paths, URLs or
// names; other kinds renamed volume-<i>, their source dropped); the
// phase, QoS class and start time, and the kubelet's eviction evidence: reason and message of an
// Evicted pod and the DisruptionTarget condition (simulate replays a recording's evictions from
// them). Labels, other annotations, images, commands, arguments, probes, the environment (names and
// values) and secret references are dropped.
func RedactPod(pod *corev1.Pod) corev1.Pod {
	out := corev1.Pod{TypeMeta: pod.TypeMeta}
	out.Name, out.Namespace, out.UID = pod.Name, pod.Namespace, pod.UID
	out.CreationTimestamp, out.DeletionTimestamp = pod.CreationTimestamp, pod.DeletionTimestamp
	out.OwnerReferences = pod.OwnerReferences
	for _, k := range keptAnnotations {
		if v, ok := pod.Annotations[k]; ok {
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[k] = v
		}
	}
	s := &pod.Spec
	out.Spec = corev1.PodSpec{NodeName: s.NodeName, Priority: s.Priority, PriorityClassName: s.PriorityClassName,
		Tolerations: s.Tolerations, TerminationGracePeriodSeconds: s.TerminationGracePeriodSeconds,
		Resources: s.Resources, Overhead: s.Overhead}
	out.Spec.Containers = redactContainers(s.Containers)
	out.Spec.InitContainers = redactContainers(s.InitContainers)
	for i, v := range s.Volumes {
		out.Spec.Volumes = append(out.Spec.Volumes, redactVolume(i, v))
	}
	out.Status = corev1.PodStatus{Phase: pod.Status.Phase, QOSClass: pod.Status.QOSClass, StartTime: pod.Status.StartTime}
	if pod.Status.Reason == evictedReason {
		out.Status.Reason, out.Status.Message = pod.Status.Reason, pod.Status.Message
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			out.Status.Conditions = append(out.Status.Conditions, c)
		}
	}
	return out
}

// evictedReason is the status reason of a pod the kubelet evicted.
const evictedReason = "Evicted"

func redactContainers(cs []corev1.Container) []corev1.Container {
	var out []corev1.Container
	for _, c := range cs {
		// No environment at all: a variable's name can say as much as its value (issue 30), and the
		// decision reads neither.
		out = append(out, corev1.Container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy})
	}
	return out
}

// redactVolume keeps the kinds the decision reads, by name (the Summary's volume stats are matched by
// it); a volume of any other kind (Secret, PersistentVolumeClaim, projected, CSI...) becomes
// "volume-<i>" without a source: its name can say what it holds.
func redactVolume(i int, v corev1.Volume) corev1.Volume {
	out := corev1.Volume{Name: fmt.Sprintf("volume-%d", i)}
	if keptVolume(v) {
		out.Name = v.Name
	}
	switch {
	case v.EmptyDir != nil:
		out.EmptyDir = v.EmptyDir
	case v.HostPath != nil:
		out.HostPath = &corev1.HostPathVolumeSource{}
	case v.GitRepo != nil: //nolint:staticcheck // deprecated but still counted by the kubelet
		out.GitRepo = &corev1.GitRepoVolumeSource{} //nolint:staticcheck // as above
	case v.ConfigMap != nil:
		out.ConfigMap = &corev1.ConfigMapVolumeSource{}
	}
	return out
}

// RedactNode returns the part of a node the decision reads: name, uid, pressure-agent's avoidance
// ledger annotation, capacity, allocatable, conditions and node info (kubelet version). Labels, other
// annotations, addresses, images, taints and the rest are dropped.
func RedactNode(n *corev1.Node) corev1.Node {
	out := corev1.Node{TypeMeta: n.TypeMeta}
	out.Name, out.UID = n.Name, n.UID
	if v, ok := n.Annotations[loopbreaker.LedgerAnnotation]; ok {
		out.Annotations = map[string]string{loopbreaker.LedgerAnnotation: v}
	}
	out.Status = corev1.NodeStatus{Capacity: n.Status.Capacity, Allocatable: n.Status.Allocatable,
		Conditions: n.Status.Conditions, NodeInfo: n.Status.NodeInfo}
	out.Status.NodeInfo.MachineID, out.Status.NodeInfo.SystemUUID, out.Status.NodeInfo.BootID = "", "", ""
	return out
}

// Redact rewrites the snapshot's node.json and pods.json to their redacted form (RedactNode,
// RedactPod), and summary.json and kubelet-config.json without what names or opens other things
// (redactkubelet.go).
func (s *Snapshot) Redact() error {
	node := RedactNode(&s.Node)
	pods := corev1.PodList{TypeMeta: s.Pods.TypeMeta, ListMeta: s.Pods.ListMeta}
	for i := range s.Pods.Items {
		pods.Items = append(pods.Items, RedactPod(&s.Pods.Items[i]))
	}
	var err error
	if s.Raw[FileNode], err = json.MarshalIndent(&node, "", "  "); err != nil {
		return fmt.Errorf("redact %s: %w", FileNode, err)
	}
	if s.Raw[FilePods], err = json.MarshalIndent(&pods, "", "  "); err != nil {
		return fmt.Errorf("redact %s: %w", FilePods, err)
	}
	s.Node, s.Pods = node, pods
	return s.redactKubelet()
}
