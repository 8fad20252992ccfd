package soak

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/evidence"
	"github.com/kube-pressure/pressure/test/evictaudit"
	"github.com/kube-pressure/pressure/test/oomkill"
)

// minEpisode is how long an episode runs at least before the driver looks for calm; a slow workload
// or a late fault makes it longer (Plan.MinDuration).
const minEpisode = 45 * time.Second

// result is what one episode observed and which invariants it broke.
type result struct {
	Plan    Plan      `json:"plan"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	Calm    bool      `json:"calm"` // false: the episode hit its cap
	// ProbeTook is how long an unrelated pod created at calm took to run (-1: not within probeWait).
	ProbeTook Duration `json:"probeTook"`
	// ProbeTaints are the node's taints seen while the probe pod waited (taintsSeen).
	ProbeTaints []string `json:"probeTaints,omitempty"`
	FaultDid    string   `json:"faultDid,omitempty"`
	FaultErr    string   `json:"faultErr,omitempty"`
	// FaultEnded is when the fault's injection returned (an apiserver-stop: the API server ready again).
	FaultEnded time.Time      `json:"faultEnded,omitempty"`
	Evictions  []Eviction     `json:"evictions"`
	Kills      []oomkill.Kill `json:"kills"`
	// OOMCounterRise is the rise of the pods cgroup's oom_kill (memory.oom_control).
	OOMCounterRise int     `json:"oomCounterRise"`
	Shells         []Shell `json:"shells"`
	// KeptOff are the episode's pods an avoidance kept off the node at the end (KeptOff).
	KeptOff   []string `json:"keptOff,omitempty"`
	Collected []string `json:"collected"`
	// Predicted are the pods simulate on the recording has pressure-agent evict; RecordErr is why there
	// is no prediction.
	Predicted []string `json:"predicted"`
	// PredictedNear are simulate's victims with the eviction lead 10% shorter and longer, by the --set
	// value (LeadTolerance): invariant 2 accepts them too, with a note.
	PredictedNear map[string][]string `json:"predictedNear,omitempty"`
	RecordErr     string              `json:"recordErr,omitempty"`
	// Why maps namespace/pod of each evicted pod to the cause `kubectl pressure why` gave (or its error).
	Why map[string]string `json:"why"`
	// PDB are the samples of the episode's PodDisruptionBudget (invariant 3's PDBKept judges by them).
	PDB        []PDBSample `json:"pdb,omitempty"`
	Violations []Violation `json:"violations"`
	// Notes say where an invariant held only by a tolerance it documents (SimulateAgrees: a lead decision
	// at its margin).
	Notes []string `json:"notes,omitempty"`
}

// episode runs p: creates its namespace and workloads, injects its fault, waits for calm (or cap),
// observes, checks the episode's invariants, and removes its running pods (the Evicted shells stay
// for the janitor). seen holds the shells seen so far over the run (namespace/pod), updated.
// The recording (kubectl pressure record, every second) goes to dir/recording, which the report keeps
// for a failing episode only.
func (c *soakCluster) episode(ctx context.Context, s *sampler, p Plan, cap time.Duration, seen map[string]bool, dir string) (result, error) {
	ns := p.Namespace()
	r := result{Plan: p}
	minFor, err := p.MinDuration(minEpisode)
	if err != nil {
		return r, err
	}
	mark, err := oomkill.Mark()
	if err != nil {
		return r, err
	}
	oomBefore, err := oomKillCount(c.node.PodsMemoryCgroupDir())
	if err != nil {
		return r, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, fmt.Errorf("episode directory: %w", err)
	}
	recording := filepath.Join(dir, "recording")
	stopRecording := c.record(ctx, recording, cap+5*time.Minute)
	if err := c.create(ctx, p); err != nil {
		_ = stopRecording()
		return r, err
	}
	s.setPDBNamespace(ns)
	defer s.setPDBNamespace("")
	r.Started = time.Now()
	done := make(chan struct{})
	if p.Fault != nil {
		go func() {
			defer close(done)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(p.Fault.At)):
			}
			if err := c.keepLogs(dir); err != nil {
				r.FaultErr = err.Error()
			}
			did, err := c.inject(ctx, *p.Fault)
			r.FaultDid, r.FaultEnded = did, time.Now()
			if err != nil {
				r.FaultErr = err.Error()
			}
		}()
	} else {
		close(done)
	}
	r.Calm = c.waitCalm(ctx, ns, r.Started.Add(minFor), r.Started.Add(cap))
	<-done
	r.ProbeTook = -1
	if r.Calm {
		took, taints := c.probe(ctx, ns)
		r.ProbeTook, r.ProbeTaints = Duration(took), taints
	}
	r.Ended = time.Now()
	if err := stopRecording(); err != nil {
		r.RecordErr = err.Error()
	} else if r.Predicted, err = predictAgent(ctx, recording); err != nil {
		r.RecordErr = err.Error()
	} else if r.PredictedNear, err = predictNear(ctx, recording); err != nil {
		r.RecordErr = err.Error()
	}
	if err := c.keepLogs(dir); err != nil {
		return r, err
	}
	if err := c.observe(ctx, &r, mark, oomBefore, seen); err != nil {
		return r, err
	}
	r.Why = c.why(ctx, r.Evictions)
	_, _, pdb := s.snapshot()
	for _, b := range pdb {
		if b.Namespace == ns {
			r.PDB = append(r.PDB, b)
		}
	}
	r.Violations, r.Notes = checkEpisode(r, pdb, c.node.PodsCgroup())
	return r, c.clear(ctx, p)
}

// checkEpisode runs the per-episode invariants (1 to 6) on r; 2 only when the recording and simulate
// worked (else RecordErr says why). notes are the tolerances used (SimulateAgrees, NoPodEvictedTwice).
func checkEpisode(r result, pdb []PDBSample, podsCgroup string) (out []Violation, notes []string) {
	out = append(out, NoForeignOOMKill(r.Kills, podsCgroup, r.OOMCounterRise)...)
	if r.RecordErr == "" {
		within, late := Recorded(r.Evictions, r.Ended)
		out = append(out, late...)
		v, note := SimulateAgrees(within, r.Predicted, r.PredictedNear, r.Plan.Fault != nil)
		out = append(out, v...)
		if note != "" {
			notes = append(notes, "2: "+note)
		}
	}
	out = append(out, NoCriticalEvicted(r.Evictions)...)
	reconnect := apiReconnect(r)
	twice, note := NoPodEvictedTwice(r.Evictions, reconnect)
	out = append(out, twice...)
	for _, n := range note {
		notes = append(notes, "3: "+n)
	}
	out = append(out, PDBKept(pdb, r.Evictions)...)
	out = append(out, WhyAgrees(r.Evictions, r.Why, reconnect)...)
	out = append(out, ShellsCollected(r.Shells, r.Ended, janitorTTL, janitorKeepPerOwner)...)
	var fault FaultKind
	if r.Plan.Fault != nil && r.FaultErr == "" {
		fault = r.Plan.Fault.Kind
	}
	out = append(out, SchedulesAgain(r.Calm, time.Duration(r.ProbeTook), r.ProbeTaints, taintHysteresis, fault)...)
	return out, notes
}

// apiReconnect is the episode's span from its API server's stop to KubeletWatchReconnect after its
// return (NoPodEvictedTwice); the zero Window when the episode stopped no API server.
func apiReconnect(r result) Window {
	f := r.Plan.Fault
	if f == nil || f.Kind != FaultAPIServerStop || r.FaultErr != "" || r.FaultEnded.IsZero() {
		return Window{}
	}
	return Window{From: r.Started.Add(time.Duration(f.At)), To: r.FaultEnded.Add(KubeletWatchReconnect)}
}

// waitServiceAccount waits up to limit for the ServiceAccount "default" of namespace ns, which the
// controller manager makes after the namespace: a pod created before it is refused ("error looking up
// service account"). After the API server's restart the controller manager takes a while to catch up
// (soak seed 20261205, episode 71 of the fourth run, right after an apiserver-stop: the run stopped).
func waitServiceAccount(ctx context.Context, client kubernetes.Interface, ns string, every, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		_, err := client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("serviceaccount %s/default not made within %s: %w", ns, limit, err)
		case <-time.After(every):
		}
	}
}

// create makes the episode's namespace, pods, critical pod and PDB-protected Deployment.
func (c *soakCluster) create(ctx context.Context, p Plan) error {
	ns := p.Namespace()
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	if err := waitServiceAccount(ctx, c.client, ns, 200*time.Millisecond, 2*time.Minute); err != nil {
		return err
	}
	labels := map[string]string{"app": "pdb"}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pdb", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(int32(p.PDBMinAvailable))),
			Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	if _, err := c.client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create PDB in %s: %w", ns, err)
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "pdb", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(p.PDBReplicas)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec(p.PDB, corev1.RestartPolicyAlways)}}}
	if _, err := c.client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create Deployment in %s: %w", ns, err)
	}
	if _, err := c.client.CoreV1().Pods("kube-system").Create(ctx, pod("kube-system", p.Critical), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create critical pod: %w", err)
	}
	for _, w := range p.Workloads {
		if _, err := c.client.CoreV1().Pods(ns).Create(ctx, pod(ns, w), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s/%s: %w", ns, w.Name, err)
		}
	}
	return nil
}

// waitCalm waits until after notBefore the node and ns's pods are calm (Unrest: no pressure condition,
// no terminating pod, no Pending pod but those an avoidance keeps off the node), and reports true; or
// until capAt, false.
func (c *soakCluster) waitCalm(ctx context.Context, ns string, notBefore, capAt time.Time) bool {
	for {
		now := time.Now()
		if !now.Before(capAt) || ctx.Err() != nil {
			return false
		}
		if !now.Before(notBefore) && c.calm(ctx, ns) {
			return true
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
}

func (c *soakCluster) calm(ctx context.Context, ns string) bool {
	n, err := c.client.CoreV1().Nodes().Get(ctx, c.node.Name(), metav1.GetOptions{})
	if err != nil {
		return false
	}
	pods, err := c.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false
	}
	return Unrest(n, pods.Items) == ""
}

// observe fills r's evictions, kernel OOM kills, oom_kill counter rise, shells and collected shells.
func (c *soakCluster) observe(ctx context.Context, r *result, mark float64, oomBefore int, seen map[string]bool) error {
	ns, crit := r.Plan.Namespace(), r.Plan.Critical.Name
	mark2 := func(e Eviction) Eviction {
		e.Critical = e.Namespace == "kube-system" && e.Pod == crit
		if e.Namespace == ns && strings.HasPrefix(e.Pod, "pdb-") {
			e.PDB = "pdb"
		}
		return e
	}
	reqs, err := evictaudit.Read(c.auditLog)
	if err != nil {
		return err
	}
	for _, q := range reqs {
		if q.Code == 201 && (q.Namespace == ns || q.Namespace == "kube-system" && q.Pod == crit) {
			r.Evictions = append(r.Evictions, mark2(Eviction{Namespace: q.Namespace, Pod: q.Pod, At: q.Received, By: "agent"}))
		}
	}
	// The agent's own DELETE of a pod: its ladder's rung after a PodDisruptionBudget refused a hard
	// eviction (eviction.allowDelete). The janitor's deletes of Evicted shells are another account's.
	writes, err := evictaudit.ReadWrites(c.auditLog)
	if err != nil {
		return err
	}
	for _, w := range writes {
		if agentDelete(w) && (w.Namespace == ns || w.Namespace == "kube-system" && w.Name == crit) {
			r.Evictions = append(r.Evictions, mark2(Eviction{Namespace: w.Namespace, Pod: w.Name, At: w.Received, By: "agent", Rung: "delete"}))
		}
	}
	slices.SortStableFunc(r.Evictions, func(a, b Eviction) int { return a.At.Compare(b.At) })
	for _, evNS := range []string{ns, "kube-system"} {
		evs, err := c.client.CoreV1().Events(evNS).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("reason", "Evicted").String()})
		if err != nil {
			return fmt.Errorf("list Evicted events of %s: %w", evNS, err)
		}
		for _, ev := range evs.Items {
			if ev.Source.Component != "kubelet" || evNS == "kube-system" && ev.InvolvedObject.Name != crit {
				continue
			}
			r.Evictions = append(r.Evictions, mark2(Eviction{Namespace: evNS, Pod: ev.InvolvedObject.Name, At: ev.FirstTimestamp.Time, By: "kubelet"}))
		}
	}
	in, unattributed, err := oomkill.Since(mark, c.node.PodsCgroup())
	if err != nil {
		return err
	}
	r.Kills = append(in, unattributed...)
	after, err := oomKillCount(c.node.PodsMemoryCgroupDir())
	if err != nil {
		return err
	}
	r.OOMCounterRise = after - oomBefore
	pods, err := c.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	present := map[string]bool{}
	for _, p := range pods.Items {
		if !strings.HasPrefix(p.Namespace, "soak-") && !(p.Namespace == "kube-system" && strings.HasPrefix(p.Name, "soak-critical-")) {
			continue
		}
		if KeptOff(&p, c.node.Name()) {
			r.KeptOff = append(r.KeptOff, p.Namespace+"/"+p.Name)
		}
		if p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted" {
			key := p.Namespace + "/" + p.Name
			present[key], seen[key] = true, true
			sh := Shell{Namespace: p.Namespace, Pod: p.Name, FinishedAt: finishedAt(&p), Created: p.CreationTimestamp.Time}
			if ref := metav1.GetControllerOf(&p); ref != nil {
				sh.Owner = string(ref.UID)
			}
			r.Shells = append(r.Shells, sh)
		}
	}
	for key := range seen {
		if !present[key] {
			r.Collected = append(r.Collected, key)
			delete(seen, key)
		}
	}
	return nil
}

// evidenceEvents are the janitor's EvictedPodDeleted Events of every namespace.
func (c *soakCluster) evidenceEvents(ctx context.Context) ([]EvidenceEvent, error) {
	evs, err := c.client.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("reason", evidence.EventReason).String()})
	if err != nil {
		return nil, fmt.Errorf("list %s events: %w", evidence.EventReason, err)
	}
	var out []EvidenceEvent
	for _, ev := range evs.Items {
		out = append(out, EvidenceEvent{Namespace: ev.Namespace, Text: ev.Message + " " + ev.Annotations[evidence.Annotation]})
	}
	return out, nil
}

// finishedAt is when a shell was evicted: its last container's finish, else its creation.
func finishedAt(p *corev1.Pod) time.Time {
	var t time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if term := cs.State.Terminated; term != nil && term.FinishedAt.After(t) {
			t = term.FinishedAt.Time
		}
	}
	for _, cond := range p.Status.Conditions {
		if t.IsZero() && cond.Type == corev1.PodReady {
			t = cond.LastTransitionTime.Time
		}
	}
	if t.IsZero() {
		t = p.CreationTimestamp.Time
	}
	return t
}

// clear deletes the episode's pods that are not Evicted shells, scales its Deployment to 0 (its shells
// stay, owned by the ReplicaSet) and waits (up to 2 minutes) until none of them runs.
func (c *soakCluster) clear(ctx context.Context, p Plan) error {
	ns := p.Namespace()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := c.client.AppsV1().Deployments(ns).Patch(ctx, "pdb", "application/merge-patch+json", []byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("scale %s/pdb to 0: %w", ns, err)
	}
	for {
		left := 0
		for _, pns := range []string{ns, "kube-system"} {
			pods, err := c.client.CoreV1().Pods(pns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return fmt.Errorf("list pods of %s: %w", pns, err)
			}
			for _, po := range pods.Items {
				if pns == "kube-system" && po.Name != p.Critical.Name || po.Status.Phase == corev1.PodFailed && po.Status.Reason == "Evicted" {
					continue
				}
				left++
				if po.DeletionTimestamp == nil && !strings.HasPrefix(po.Name, "pdb-") {
					_ = c.client.CoreV1().Pods(pns).Delete(ctx, po.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
				}
			}
		}
		if left == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("clear episode %d: %d pods left: %w", p.Episode, left, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// oomKillCount reads oom_kill of memory.oom_control in dir (cgroup v1).
func oomKillCount(dir string) (int, error) {
	path := filepath.Join(dir, "memory.oom_control")
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "oom_kill "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return 0, fmt.Errorf("%s: oom_kill %q: %w", path, v, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s: no oom_kill line", path)
}
