package e2e

// End-to-end tests of `kubectl pressure snapshot` and `kubectl pressure explain` on the package's real
// node (TestMain in main_test.go): pods of every QoS class, the real kubelet's Summary and /configz through
// the apiserver's node proxy, and — the anchor — real memory pressure, where the kubelet's actual next
// victim and its message must be the ones explain put first.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kube-pressure/pressure/internal/cli"
)

// explainReport is the part of `explain -o json` these tests read.
type explainReport struct {
	Node        string            `json:"node"`
	Allocatable map[string]string `json:"allocatable"`
	Thresholds  []struct {
		Threshold, Signal, FiresAbove, Capacity string
	} `json:"thresholds"`
	Signals []struct {
		Signal, Available, Threshold string
		Met                          bool
	} `json:"signals"`
	Kubelet struct {
		ThresholdsMet     []string `json:"thresholdsMet"`
		ResourceToReclaim string   `json:"resourceToReclaim"`
		EvictionOrder     []struct {
			Pod, QOSClass, DecidedBy, Message string
			Critical                          bool
			GracePeriodSeconds                int64
		} `json:"evictionOrder"`
	} `json:"kubelet"`
	Warnings []string `json:"warnings"`
}

// kubectlPressure runs the CLI in-process against the package cluster and returns stdout.
func kubectlPressure(ctx context.Context, t *testing.T, e *env, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	err := cli.Run(ctx, streams, append([]string{"--kubeconfig", e.cp.Kubeconfig()}, args...))
	return out.String(), err
}

func explainJSON(ctx context.Context, t *testing.T, e *env, args ...string) explainReport {
	t.Helper()
	out, err := kubectlPressure(ctx, t, e, append([]string{"explain", "-o", "json"}, args...)...)
	if err != nil {
		t.Fatalf("explain %v: %v", args, err)
	}
	var r explainReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("explain %v: output is not JSON: %v\n%s", args, err, out)
	}
	return r
}

// qosPods are the non-critical pods of the tests, one or more per QoS class, with well separated
// (usage − request) so that the kubelet's ranking cannot flip between stats refreshes:
// burstable-big +50Mi, besteffort +30Mi, guaranteed −40Mi, burstable-small −112Mi.
func qosPods(ns string) []*corev1.Pod {
	mem := func(target string) []string { return []string{"mem", "--rate", "0", "--target", target} }
	return []*corev1.Pod{
		stressPod(ns, "burstable-big", mem("60Mi"), "10Mi", false),
		stressPod(ns, "besteffort", mem("30Mi"), "", false),
		stressPod(ns, "guaranteed", mem("24Mi"), "64Mi", true),
		stressPod(ns, "burstable-small", mem("16Mi"), "128Mi", false),
	}
}

// startQoSPods creates the pods and waits until the kubelet's (cached) Summary shows each one using at
// least its target, so that the kubelet and explain rank with real usage.
func startQoSPods(ctx context.Context, t *testing.T, e *env, ns string) []string {
	t.Helper()
	waitNoMemoryPressure(ctx, t, e)
	var names []string
	want := map[string]uint64{"burstable-big": 60 << 20, "besteffort": 30 << 20, "guaranteed": 24 << 20, "burstable-small": 16 << 20}
	for _, p := range qosPods(ns) {
		createPod(ctx, t, e, p)
		names = append(names, p.Name)
	}
	waitRunning(ctx, t, e, ns, names...)
	poll(ctx, t, "pod stats in the kubelet Summary show the pods' memory", func() (bool, string) {
		s, err := cli.FetchSnapshot(ctx, e.client, e.node.Name())
		if err != nil {
			return false, err.Error()
		}
		var status []string
		ok := true
		for name, min := range want {
			var ws uint64
			for _, ps := range s.Summary.Pods {
				if ps.PodRef.Namespace == ns && ps.PodRef.Name == name && ps.Memory != nil && ps.Memory.WorkingSetBytes != nil {
					ws = *ps.Memory.WorkingSetBytes
				}
			}
			status = append(status, name+"="+formatMi(ws))
			ok = ok && ws >= min
		}
		return ok, strings.Join(status, " ")
	})
	return names
}

func formatMi(b uint64) string { return fmt.Sprintf("%.1fMi", float64(b)/(1<<20)) }

// waitNoMemoryPressure waits until an earlier test's MemoryPressure (transition period 20s) has cleared,
// so that the scheduler places new pods.
func waitNoMemoryPressure(ctx context.Context, t *testing.T, e *env) {
	t.Helper()
	poll(ctx, t, "node without MemoryPressure", func() (bool, string) {
		n, err := e.client.CoreV1().Nodes().Get(ctx, e.node.Name(), metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeMemoryPressure {
				return c.Status != corev1.ConditionTrue, string(c.Status)
			}
		}
		return false, "no MemoryPressure condition"
	})
}

func TestSnapshotAndExplainTheRealNode(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "explain")
	names := startQoSPods(ctx, t, e, ns)

	dir := filepath.Join(t.TempDir(), "snap")
	out, err := kubectlPressure(ctx, t, e, "snapshot", e.node.Name(), "--out", dir)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	t.Logf("snapshot: %s", strings.TrimSpace(out))
	snap, err := cli.LoadSnapshotDir(os.DirFS(dir), dir)
	if err != nil {
		t.Fatalf("the saved snapshot does not load: %v", err)
	}
	if !snap.KubeletConfig.Effective {
		t.Errorf("kubelet-config.json is not the /configz wrapper")
	}
	onNode := map[string]bool{}
	for _, p := range snap.Pods.Items {
		if p.Spec.NodeName != e.node.Name() {
			t.Errorf("pods.json holds pod %s/%s of node %q", p.Namespace, p.Name, p.Spec.NodeName)
		}
		onNode[p.Namespace+"/"+p.Name] = true
	}
	for _, n := range names {
		if !onNode[ns+"/"+n] {
			t.Errorf("pods.json lacks pod %s/%s", ns, n)
		}
	}

	node, err := e.client.CoreV1().Nodes().Get(ctx, e.node.Name(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []explainReport{explainJSON(ctx, t, e, "--snapshot", dir), explainJSON(ctx, t, e, e.node.Name())} {
		if r.Node != e.node.Name() {
			t.Errorf("explain node = %q, want %q", r.Node, e.node.Name())
		}
		// Our allocatable math must give exactly what the kubelet reports.
		want := node.Status.Allocatable.Memory().Value()
		if got := r.Allocatable["memory"]; got != jsonInt(want) {
			t.Errorf("explain allocatable memory = %s, the kubelet reports %d", got, want)
		}
		var fires string
		for _, f := range r.Thresholds {
			if f.Signal == "allocatableMemory.available" {
				fires = f.FiresAbove
			}
		}
		if want := jsonInt(e.podsLimit.Value() - 200<<20); fires != want {
			t.Errorf("allocatableMemory.available fires above %q, want pods cgroup limit − %s = %s", fires, evictionThreshold, want)
		}
		if len(r.Kubelet.ThresholdsMet) != 0 {
			t.Errorf("thresholds met without pressure: %v (signals %+v)", r.Kubelet.ThresholdsMet, r.Signals)
		}
	}
	text, err := kubectlPressure(ctx, t, e, "explain", e.node.Name())
	if err != nil {
		t.Fatalf("explain text: %v", err)
	}
	for _, section := range []string{"ALLOCATABLE", "WHEN EVICTION STARTS", "SIGNALS NOW", "NODE CONDITIONS", "KUBELET:"} {
		if !strings.Contains(text, section) {
			t.Errorf("text output lacks section %q:\n%s", section, text)
		}
	}
	t.Logf("explain %s:\n%s", e.node.Name(), text)
}

func jsonInt(v int64) string { b, _ := json.Marshal(v); return string(b) }

// prediction is explain's next victim at one moment of the pressure.
type prediction struct {
	at      time.Time
	evicted int // evictions seen before it
	pod     string
	message string
	order   []string
	late    bool // the snapshot shows the pod already stopped by the kubelet
}

func TestExplainPredictsTheKubeletsNextVictimUnderRealPressure(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "explain-pressure")
	victims := startQoSPods(ctx, t, e, ns)

	// A critical hog alone above the eviction threshold (pods cgroup 2Gi, threshold 200Mi: pods may use
	// 1848Mi) keeps the pressure on while the kubelet evicts the other pods one per cycle; it is never
	// evicted itself.
	hog := stressPod("kube-system", "", []string{"mem", "--rate", "64Mi", "--target", "1860Mi"}, "", false)
	hog.GenerateName = "explain-critical-hog-"
	hog.Spec.PriorityClassName = "system-node-critical"
	created, err := e.client.CoreV1().Pods("kube-system").Create(ctx, hog, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deleteAndWait(t, e, "kube-system", created.Name)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		waitNoMemoryPressure(ctx, t, e) // leave the node schedulable for the next test
	})

	order := watchEvictions(ctx, t, e, ns)
	var preds []prediction
	deadline := time.Now().Add(3 * time.Minute)
	for len(order.list()) < len(victims) && time.Now().Before(deadline) {
		if pr, ok := predictNext(ctx, t, e, ns, len(order.list())); ok {
			preds = append(preds, pr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	evicted, messages := order.list(), order.messages()
	for _, v := range evicted {
		t.Logf("kubelet evicted %s: %q", v, messages[v])
	}
	want := []string{ns + "/burstable-big", ns + "/besteffort", ns + "/guaranteed", ns + "/burstable-small"}
	if strings.Join(evicted, " ") != strings.Join(want, " ") {
		t.Errorf("the kubelet evicted %v, want %v (usage above request first, then by usage − request)", evicted, want)
	}
	checkPredictions(t, preds, evicted, messages)
	p, err := e.client.CoreV1().Pods("kube-system").Get(ctx, created.Name, metav1.GetOptions{})
	if err != nil || p.Status.Phase != corev1.PodRunning {
		t.Errorf("critical hog: %v, phase %v: want Running (explain marks critical pods as never evicted)", err, phaseOf(p))
	}
}

// evictionOrder records, from a watch (so in the apiserver's order), the pods of a namespace as they
// turn Failed with reason Evicted, and their messages.
type evictionOrder struct {
	mu    sync.Mutex
	order []string
	msg   map[string]string
}

func (o *evictionOrder) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.order...)
}

func (o *evictionOrder) messages() map[string]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]string{}
	for k, v := range o.msg {
		out[k] = v
	}
	return out
}

func watchEvictions(ctx context.Context, t *testing.T, e *env, ns string) *evictionOrder {
	t.Helper()
	list, err := e.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := e.client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	o := &evictionOrder{msg: map[string]string{}}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || p.Status.Phase != corev1.PodFailed || p.Status.Reason != "Evicted" {
				continue
			}
			key := p.Namespace + "/" + p.Name
			o.mu.Lock()
			if _, seen := o.msg[key]; !seen {
				o.order = append(o.order, key)
				o.msg[key] = p.Status.Message
			}
			o.mu.Unlock()
		}
	}()
	return o
}

// predictNext runs `kubectl pressure snapshot` and `explain --snapshot -o json`; when explain sees a
// threshold met it returns its first non-critical pod. A snapshot whose Summary no longer has that
// pod's container stats was taken after the kubelet had already stopped the pod (its status not yet
// Failed): it is marked late, since the kubelet decided on earlier stats.
func predictNext(ctx context.Context, t *testing.T, e *env, ns string, evicted int) (prediction, bool) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "snap")
	at := time.Now()
	if _, err := kubectlPressure(ctx, t, e, "snapshot", e.node.Name(), "--out", dir); err != nil {
		t.Logf("snapshot during pressure: %v", err) // e.g. a pod deleted between list and summary
		return prediction{}, false
	}
	r := explainJSON(ctx, t, e, "--snapshot", dir)
	if len(r.Kubelet.ThresholdsMet) == 0 {
		return prediction{}, false
	}
	pr := prediction{at: at, evicted: evicted}
	for _, v := range r.Kubelet.EvictionOrder {
		if v.Critical {
			continue
		}
		if pr.pod == "" {
			pr.pod, pr.message = v.Pod, v.Message
		}
		pr.order = append(pr.order, v.Pod)
	}
	if pr.pod == "" || !strings.HasPrefix(pr.pod, ns+"/") {
		// Nothing to evict, or a pod of another test first: the kubelet's next victim is not one we watch.
		return prediction{}, false
	}
	snap, err := cli.LoadSnapshotDir(os.DirFS(dir), dir)
	if err != nil {
		t.Fatalf("reload snapshot: %v", err)
	}
	pr.late = true
	for _, ps := range snap.Summary.Pods {
		if ps.PodRef.Namespace+"/"+ps.PodRef.Name == pr.pod {
			for _, c := range ps.Containers {
				if c.Memory != nil && c.Memory.WorkingSetBytes != nil {
					pr.late = false
				}
			}
		}
	}
	return pr, true
}

// numbers masks the amounts that change between two stats samples (available, usage) in a message.
var numbers = regexp.MustCompile(`(available: |was using )[0-9.]+[A-Za-z]*`)

// checkPredictions checks every prediction against the eviction that followed it: a prediction made
// after n evictions must name the kubelet's (n+1)-th victim, with the same message once the amounts
// sampled at different moments are masked. Late predictions (the snapshot shows the pod's containers
// already stopped: the kubelet decided before) are logged and skipped. At least one prediction must
// have been checked, or the test fails.
func checkPredictions(t *testing.T, preds []prediction, evicted []string, messages map[string]string) {
	t.Helper()
	checked := 0
	for _, pr := range preds {
		if pr.evicted >= len(evicted) {
			continue
		}
		actual := evicted[pr.evicted]
		if contains(evicted[:pr.evicted], pr.pod) {
			continue
		}
		if pr.late {
			t.Logf("explain at %s predicted %s from a snapshot taken after the kubelet had stopped it: not checked",
				pr.at.UTC().Format(time.RFC3339Nano), pr.pod)
			continue
		}
		checked++
		if pr.pod != actual {
			t.Errorf("explain at %s (after %d evictions) predicted %s next (order %v); the kubelet evicted %s",
				pr.at.UTC().Format(time.RFC3339Nano), pr.evicted, pr.pod, pr.order, actual)
			continue
		}
		got, want := numbers.ReplaceAllString(messages[actual], "${1}N"), numbers.ReplaceAllString(pr.message, "${1}N")
		if got != want {
			t.Errorf("message of %s: kubelet %q, explain %q (amounts masked: %q vs %q)", actual, messages[actual], pr.message, got, want)
		}
		if messages[actual] == pr.message {
			t.Logf("explain predicted %s and its message byte for byte: %q", actual, pr.message)
		} else {
			t.Logf("explain predicted %s; messages equal but for amounts sampled at different times: kubelet %q, explain %q",
				actual, messages[actual], pr.message)
		}
	}
	if checked == 0 {
		t.Errorf("no explain run saw a threshold met before the kubelet's next eviction (%d predictions, evictions %v): "+
			"the kubelet's Summary is cached and the kubelet acts within a second", len(preds), evicted)
	}
	t.Logf("%d predictions made under pressure, %d checked against the kubelet's next victim", len(preds), checked)
}

// deleteAndWait deletes a pod and waits until it is gone, so its memory is released for later tests.
func deleteAndWait(t *testing.T, e *env, ns, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = e.client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
	poll(ctx, t, "pod "+ns+"/"+name+" gone", func() (bool, string) {
		_, err := e.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return err != nil, ""
	})
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}
