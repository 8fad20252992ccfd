package cli

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kube-pressure/pressure/internal/evidence"
	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/why"
)

func newWhyCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var output string
	var since time.Duration
	cmd := &cobra.Command{
		Use:   "why POD",
		Short: "Say who killed a pod (or restarted its container), and why that one",
		Long: `Why collects the evidence about a pod (its status, the Events on it, its node and its owner, pressure-janitor's
evidence record, pressure-agent's ledger on the node, the kubelet's configuration and the pods on the node)
and prints a verdict with its evidence and confidence: evicted by the kubelet or by pressure-agent, OOM-killed
by its own limit or by the kernel for the node or the pods cgroup, preempted, deleted, killed after a failed
liveness probe, node shutdown, or unknown with what was checked. For evictions it adds the threshold and
allocatable math, the ranking re-run with the decision core, and what would have prevented it.
POD is a name or a UID; a pod already deleted is found while Events or the janitor's record remain.`,
		Example: `  kubectl pressure why web-7d9f-x2kq -n shop
  kubectl pressure why 3f0c1d2e-... -n shop -o json --since 2h`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if since < 0 {
				return fmt.Errorf("--since %s: must not be negative", since)
			}
			ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
			if err != nil {
				return fmt.Errorf("namespace: %w", err)
			}
			cs, err := clientset(flags)
			if err != nil {
				return err
			}
			now := time.Now()
			ev, err := CollectWhy(cmd.Context(), cs, ns, args[0], now, since)
			if err != nil {
				return err
			}
			return renderWhy(streams, why.Decide(ev), output)
		},
	}
	addOutputFlag(cmd, &output, "the same as text: its lines are never wrapped")
	cmd.Flags().DurationVar(&since, "since", 0, "only consider Events and records from this long ago (0: all that remain)")
	return cmd
}

// renderWhy writes the verdict as text (wide is the same), or as a WhyResult in a machine format.
func renderWhy(streams genericiooptions.IOStreams, v why.Verdict, output string) error {
	if isText(output) {
		return why.Text(streams.Out, v)
	}
	return printObject(streams.Out, KindWhyResult, v, output)
}

// collector gathers the evidence of one pod.
type collector struct {
	cs    kubernetes.Interface
	ns    string
	since time.Time
	ev    why.Evidence
}

// CollectWhy gathers the evidence about pod query (a name or UID) in namespace ns. Only a failure to
// read the pod or the namespace's Events is an error; anything else missing becomes a Problem.
func CollectWhy(ctx context.Context, cs kubernetes.Interface, ns, query string, now time.Time, since time.Duration) (why.Evidence, error) {
	c := &collector{cs: cs, ns: ns, ev: why.Evidence{Now: now, Query: query, Namespace: ns}}
	if since > 0 {
		c.since = now.Add(-since)
	}
	pod, err := c.findPod(ctx, query)
	if err != nil {
		return c.ev, err
	}
	name, uid, node := query, "", ""
	if pod != nil {
		p, v := whyPod(pod), kubeconv.Candidate(pod, nil)
		c.ev.Pod, c.ev.Victim = &p, &v
		name, uid, node = pod.Name, string(pod.UID), pod.Spec.NodeName
	}
	if err := c.janitorEvidence(ctx, name, uid); err != nil {
		return c.ev, err
	}
	if j := c.ev.Janitor; j != nil && pod == nil {
		name, uid, node = j.Pod, j.UID, j.Node
	}
	if err := c.podEvents(ctx, name, uid); err != nil {
		return c.ev, err
	}
	if uid == "" {
		uid = uidFromEvents(c.ev.Events)
		c.ev.Events = c.onePod(c.ev.Events, uid)
	}
	if node == "" {
		node = nodeFromEvents(c.ev.Events)
	}
	if err := c.ownerEvents(ctx); err != nil {
		return c.ev, err
	}
	if node != "" {
		c.nodeEvidence(ctx, node, uid, pod)
	} else {
		c.problem("the pod's node is unknown (no pod, no janitor record, no kubelet Event): node Events, ledger and configuration not read")
	}
	return c.ev, nil
}

func (c *collector) checked(s string) { c.ev.Checked = append(c.ev.Checked, s) }
func (c *collector) problem(s string) { c.ev.Problems = append(c.ev.Problems, s) }

// findPod gets the pod by name, or by UID among the namespace's pods; nil when it is gone.
func (c *collector) findPod(ctx context.Context, query string) (*corev1.Pod, error) {
	c.checked(fmt.Sprintf("pod %s/%s (GET)", c.ns, query))
	p, err := c.cs.CoreV1().Pods(c.ns).Get(ctx, query, metav1.GetOptions{})
	if err == nil {
		return p, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("get pod %s/%s: %w", c.ns, query, err)
	}
	list, err := c.cs.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list pods in %s: %w", c.ns, err)
	}
	c.checked(fmt.Sprintf("pods in %s with uid %s (LIST)", c.ns, query))
	for i := range list.Items {
		if string(list.Items[i].UID) == query {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

func (c *collector) listEvents(ctx context.Context, ns string, sel fields.Set) ([]corev1.Event, error) {
	list, err := c.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
	if err != nil {
		return nil, fmt.Errorf("list events in %s (%s): %w", ns, sel.AsSelector().String(), err)
	}
	c.checked(fmt.Sprintf("Events in %s with %s: %d", ns, sel.AsSelector().String(), len(list.Items)))
	return list.Items, nil
}

// janitorEvidence finds pressure-janitor's EvictedPodDeleted Event about the pod (by name or UID).
func (c *collector) janitorEvidence(ctx context.Context, name, uid string) error {
	evs, err := c.listEvents(ctx, c.ns, fields.Set{"reason": evidence.EventReason})
	if err != nil {
		return err
	}
	var found []*why.JanitorRecord
	for i := range evs {
		recs, err := janitorRecords(&evs[i])
		if err != nil {
			c.problem(fmt.Sprintf("Event %s/%s: %v", evs[i].Namespace, evs[i].Name, err))
			continue
		}
		if !recent(whyEvent(&evs[i]), c.since) {
			continue
		}
		for _, r := range recs {
			if r.Pod == name || r.UID == name || (uid != "" && r.UID == uid) {
				found = append(found, r)
			}
		}
	}
	sort.Slice(found, func(i, j int) bool {
		if !found[i].EvictedAt.Equal(found[j].EvictedAt) {
			return found[i].EvictedAt.After(found[j].EvictedAt)
		}
		return found[i].UID < found[j].UID
	})
	if len(found) > 1 && uid == "" {
		c.problem(fmt.Sprintf("%d janitor records name pod %s (pods of the same name): the newest is used; ask by UID for another", len(found), name))
	}
	if len(found) > 0 {
		c.ev.Janitor = found[0]
	}
	return nil
}

// podEvents lists the Events on the pod: by UID when known, else by name, and for a gone pod with no
// Events under that name by UID (the query may be the UID of a pod nothing else remembers).
func (c *collector) podEvents(ctx context.Context, name, uid string) error {
	sel := fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": name}
	if uid != "" {
		sel = fields.Set{"involvedObject.uid": uid}
	}
	evs, err := c.listEvents(ctx, c.ns, sel)
	if err != nil {
		return err
	}
	if len(evs) == 0 && uid == "" {
		if evs, err = c.listEvents(ctx, c.ns, fields.Set{"involvedObject.uid": name}); err != nil {
			return err
		}
	}
	c.ev.Events = c.convert(evs)
	return nil
}

// onePod keeps the Events of the gone pod uid (the newest pod of the name asked for) and those that name
// no UID; the Events of earlier pods of the same name (a StatefulSet's, a re-created bare pod's) are
// left out, and said so, so that the verdict is about one pod.
func (c *collector) onePod(evs []why.Event, uid string) []why.Event {
	var out []why.Event
	var others []string
	for _, e := range evs {
		switch {
		case e.ObjectUID == "" || e.ObjectUID == uid:
			out = append(out, e)
		case !slices.Contains(others, e.ObjectUID):
			others = append(others, e.ObjectUID)
		}
	}
	if len(others) > 0 {
		sort.Strings(others)
		c.problem(fmt.Sprintf("Events of %d earlier pods of the same name left out (uid %s): the newest pod (uid %s) is explained; ask by UID for another",
			len(others), strings.Join(others, ", "), uid))
	}
	return out
}

func (c *collector) convert(evs []corev1.Event) []why.Event {
	var out []why.Event
	for i := range evs {
		if e := whyEvent(&evs[i]); recent(e, c.since) {
			out = append(out, e)
		}
	}
	return out
}

// ownerEvents lists the controllers' SuccessfulDelete Events in the namespace (the rule matches the pod's name).
func (c *collector) ownerEvents(ctx context.Context) error {
	evs, err := c.listEvents(ctx, c.ns, fields.Set{"reason": why.ReasonCtrlDelete})
	if err != nil {
		return err
	}
	c.ev.OwnerEvents = c.convert(evs)
	return nil
}

// uidFromEvents is the UID of a gone pod as its newest Event names it.
func uidFromEvents(evs []why.Event) string {
	uid, last := "", time.Time{}
	for _, e := range evs {
		if e.ObjectUID != "" && (uid == "" || e.Last.After(last)) {
			uid, last = e.ObjectUID, e.Last
		}
	}
	return uid
}

func nodeFromEvents(evs []why.Event) string {
	for _, e := range evs {
		if e.Source == why.ComponentKubelet && e.Host != "" {
			return e.Host
		}
	}
	return ""
}

// nodeEvidence reads the node's Events, ledger, configuration and pods. Failures are problems.
func (c *collector) nodeEvidence(ctx context.Context, node, uid string, pod *corev1.Pod) {
	evs, err := c.listEvents(ctx, metav1.NamespaceDefault, fields.Set{"involvedObject.kind": "Node", "involvedObject.name": node})
	if err != nil {
		c.problem(err.Error())
	}
	c.ev.NodeEvents = c.convert(evs)
	snap, err := FetchSnapshot(ctx, c.cs, node)
	if err != nil {
		c.problem(err.Error())
		n, gerr := c.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if gerr != nil {
			return
		}
		c.ledger(n, uid)
		return
	}
	c.checked("node " + node + ": status, pods, kubelet Summary and /configz")
	c.ledger(&snap.Node, uid)
	if c.ev.Node, err = nodeFacts(snap); err != nil {
		c.problem(err.Error())
	}
	stats := kubeconv.Snapshot(&snap.Summary).Pods
	for i := range snap.Pods.Items {
		p := &snap.Pods.Items[i]
		if string(p.UID) == uid {
			continue
		}
		c.ev.NodePods = append(c.ev.NodePods, whyPod(p))
		if active(p) {
			c.ev.Neighbours = append(c.ev.Neighbours, kubeconv.Candidate(p, stats))
		}
	}
}

func (c *collector) ledger(n *corev1.Node, uid string) {
	entries, problem := ledgerEntries(n, uid)
	c.checked(fmt.Sprintf("node %s: annotation pressure.kube-pressure.io/ledger: %d entries for uid %s", n.Name, len(entries), uid))
	if problem != "" {
		c.problem(problem)
	}
	c.ev.Ledger = entries
}
