package cli

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/explain"
	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// ExplainInput converts a snapshot into the explain package's input. now is the reference time of
// stats ages (zero: the newest stats in the snapshot). A configuration the kubelet would reject is
// an error naming the file and setting; pods without stats and similar problems are warnings.
func ExplainInput(s *Snapshot, source string, now time.Time) (explain.Input, error) {
	cfg, err := threshold.ParseConfig(s.KubeletConfig.ThresholdInput())
	if err != nil {
		return explain.Input{}, &FileError{File: s.Origin[FileKubeletConfig], Err: err}
	}
	capa, err := capacity(s.Origin[FileNode], s.Node.Status.Capacity, s.Raw[FileNode])
	if err != nil {
		return explain.Input{}, err
	}
	node := s.Node.Name
	in := explain.Input{Node: node, Source: source, Now: now, Config: cfg, Capacity: capa,
		Snapshot: kubeconv.Snapshot(&s.Summary)}
	in.DisableLocalStorageCapacityIsolation = !s.KubeletConfig.LocalStorageCapacityIsolation()
	in.Unavailable = s.Unavailable
	in.Semantics = KubeletSemantics(s, "")
	in.Warnings = append(in.Warnings, s.KubeletConfig.Warnings...)
	in.Warnings = append(in.Warnings, hugeNumbers(s.Origin[FileSummary], s.Raw[FileSummary])...)
	in.Warnings = append(in.Warnings, hugeQuantities(s.Origin[FileKubeletConfig], s.Raw[FileKubeletConfig])...)
	in.Warnings = append(in.Warnings, hugeQuantities(s.Origin[FilePods], s.Raw[FilePods])...)
	in.Warnings = append(in.Warnings, duplicateStats(s)...)
	if got := s.Summary.Node.NodeName; got != node && len(s.Unavailable) == 0 {
		in.Warnings = append(in.Warnings, fmt.Sprintf("%s: node.nodeName is %q, but %s is node %q",
			s.Origin[FileSummary], got, s.Origin[FileNode], node))
	}
	for i := range s.Pods.Items {
		pod := &s.Pods.Items[i]
		if pod.Spec.NodeName != node {
			in.Warnings = append(in.Warnings, fmt.Sprintf("%s: items[%d] (pod %s/%s): spec.nodeName is %q, not %q: ignored",
				s.Origin[FilePods], i, pod.Namespace, pod.Name, pod.Spec.NodeName, node))
			continue
		}
		if !active(pod) {
			if pod.DeletionTimestamp != nil {
				in.TerminalPods = append(in.TerminalPods, kubeconv.PolicyPod(pod, in.Snapshot.Pods))
			}
			continue
		}
		c := kubeconv.Candidate(pod, in.Snapshot.Pods)
		in.Warnings = append(in.Warnings, statsWarnings(s, c)...)
		in.Candidates = append(in.Candidates, c)
		noteDeletion(&in, pod)
	}
	sort.SliceStable(in.Candidates, func(i, j int) bool { return candidateKey(in.Candidates[i]) < candidateKey(in.Candidates[j]) })
	in.Reclaimable = reclaimable(s, in.Snapshot)
	in.Avoidances, in.Ledger, in.Warnings = readLedger(s, in.Warnings)
	for _, c := range s.Node.Status.Conditions {
		in.NodeConditions = append(in.NodeConditions, explain.NodeCondition{Type: string(c.Type), Status: string(c.Status),
			Reason: c.Reason, Message: c.Message, Since: c.LastTransitionTime.UTC()})
	}
	return in, nil
}

func candidateKey(c rank.Candidate) string { return c.Namespace + "/" + c.Name + "/" + c.UID }

// noteDeletion records a terminating pod's deletion timestamp (pressure-agent credits its usage).
func noteDeletion(in *explain.Input, pod *corev1.Pod) {
	if pod.DeletionTimestamp == nil {
		return
	}
	if in.DeletionTimestamps == nil {
		in.DeletionTimestamps = map[string]time.Time{}
	}
	in.DeletionTimestamps[string(pod.UID)] = pod.DeletionTimestamp.UTC()
}

// active reports whether the kubelet counts a pod bound to its node among the active pods: not in a
// terminal phase.
func active(pod *corev1.Pod) bool {
	return pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// statsWarnings flags a pod without stats, or without a memory working set.
func statsWarnings(s *Snapshot, c rank.Candidate) []string {
	name := c.Namespace + "/" + c.Name
	switch {
	case c.Stats == nil:
		return []string{fmt.Sprintf("%s: pods: no stats for pod %s (uid %s): the kubelet ranks it before every pod "+
			"with stats (stats-based keys)", s.Origin[FileSummary], name, c.UID)}
	case c.Stats.MemoryWorkingSet == nil:
		return []string{fmt.Sprintf("%s: pods[uid=%s].memory.workingSetBytes: missing for pod %s: the kubelet "+
			"counts its memory usage as 0", s.Origin[FileSummary], c.UID, name)}
	}
	return nil
}

// readLedger reads the pressure-agent's ledger annotation of the node: its avoidances, and its evictions
// for the policy's input (none recorded without the annotation; nil, unknown, when it cannot be read,
// which is a warning naming the file and annotation).
func readLedger(s *Snapshot, warnings []string) ([]explain.Avoidance, *policy.Ledger, []string) {
	l, err := nodeLedger(&s.Node, policy.LoopConfig{})
	if err != nil {
		return nil, nil, append(warnings, fmt.Sprintf("%s: annotation %s: %v", s.Origin[FileNode], loopbreaker.LedgerAnnotation, err))
	}
	var out []explain.Avoidance
	for _, a := range l.Avoidances(time.Time{}) {
		out = append(out, explain.Avoidance{Workload: a.Owner.String(), UID: string(a.Owner.UID), Until: a.Until.UTC(), Loop: a.Loop})
	}
	return out, policy.LedgerOf(l.Entries()), warnings
}

// nodeLedger reads the node's ledger annotation with the ledger policy p (an empty ledger without the
// annotation: the agent has recorded no eviction there).
func nodeLedger(n *corev1.Node, p policy.LoopConfig) (*policy.History, error) {
	v, ok := n.Annotations[loopbreaker.LedgerAnnotation]
	if !ok {
		return policy.NewHistory(p), nil
	}
	return loopbreaker.ReadLedger(strings.NewReader(v), p)
}

// reclaimable estimates what the kubelet's node-level reclaim could free, as the agent does: the node's
// images (status.images) no active pod uses, and the logs of its terminated pods (Summary). Nil when
// the Node lists no images (a snapshot without them, or a kubelet with nodeStatusMaxImages 0).
func reclaimable(s *Snapshot, snap signal.Snapshot) *policy.Reclaimable {
	return reclaimableOf(&s.Node, s.Pods.Items, snap)
}

// reclaimableOf is reclaimable for a Node and a pod list (the pods bound to other nodes are ignored).
func reclaimableOf(node *corev1.Node, items []corev1.Pod, snap signal.Snapshot) *policy.Reclaimable {
	if len(node.Status.Images) == 0 {
		return nil
	}
	pods := make([]*corev1.Pod, 0, len(items))
	for i := range items {
		if items[i].Spec.NodeName == node.Name {
			pods = append(pods, &items[i])
		}
	}
	r := &policy.Reclaimable{UnusedImages: kubeconv.UnusedImageBytes(node.Status.Images, pods),
		Source:            "the node's status.images and the terminated pods' logs",
		DeadContainerLogs: kubeconv.DeadContainerLogBytes(pods, snap)}
	return r
}
