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
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
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
	// The Node's condition trails the kubelet's own by up to nodeStatusUpdateFrequency (5 s here): a
	// kubelet eviction a moment ago has pressure on while the Node still says False, and the kubelet
	// rejects a new pod at admission. So the condition must stay off for two status updates and more.
	const settled = 12 * time.Second
	var clearSince time.Time
	poll(ctx, t, "node without MemoryPressure for "+settled.String(), func() (bool, string) {
		n, err := e.client.CoreV1().Nodes().Get(ctx, e.node.Name(), metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range n.Status.Conditions {
			if c.Type != corev1.NodeMemoryPressure {
				continue
			}
			if c.Status == corev1.ConditionTrue {
				clearSince = time.Time{}
				return false, string(c.Status)
			}
			if clearSince.IsZero() {
				clearSince = time.Now()
			}
			return time.Since(clearSince) >= settled, fmt.Sprintf("%s for %s", c.Status, time.Since(clearSince).Round(time.Second))
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
	// Redacted by default, private files: no labels (the kubelet sets kubernetes.io/hostname on the
	// node), no images; the directory 0700, the files 0600.
	for _, f := range []struct{ name, secret string }{{cli.FileNode, "kubernetes.io/hostname"}, {cli.FilePods, `"image"`},
		{cli.FileSummary, ""}, {cli.FileKubeletConfig, ""}} {
		path := filepath.Join(dir, f.name)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", path, fi.Mode().Perm())
		}
		if data, _ := os.ReadFile(path); f.secret != "" && strings.Contains(string(data), f.secret) {
			t.Errorf("%s holds %s, want it redacted", path, f.secret)
		}
	}
	if fi, err := os.Stat(dir); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o700 {
		t.Errorf("snapshot dir %s: mode %v, want 0700", dir, fi.Mode().Perm())
	}
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
	at, done time.Time         // when the snapshot started and when explain finished
	pod      string            // the first non-critical pod still running
	message  string            // its eviction message
	order    []string          // the full order, critical pods included
	critical map[string]bool   // the pods explain marked critical
	messages map[string]string // explain's message for every non-critical pod with container stats
}

// checkExplainEpisode checks explain's predictions of one episode of
// TestSimulatePredictsTheKubeletsEvictionsOfARealRecording: the kubelet evicted the QoS pods of ns in
// its order, explain's predicted orders and messages match its rankings and messages (checkPredictions),
// and the critical base hog still runs (explain marks critical pods as never evicted).
func checkExplainEpisode(ctx context.Context, t *testing.T, e *env, ns string, klog *kubeletLogReader, base string, preds []prediction) {
	t.Helper()
	evicted := klog.evicted(ns)
	messages := evictionMessages(ctx, t, e, ns, evicted)
	for _, v := range evicted {
		t.Logf("kubelet evicted %s: %q", v, messages[v])
	}
	want := []string{ns + "/burstable-big", ns + "/besteffort", ns + "/guaranteed", ns + "/burstable-small"}
	if strings.Join(evicted, " ") != strings.Join(want, " ") {
		t.Errorf("the kubelet evicted %v, want %v (usage above request first, then by usage − request)", evicted, want)
	}
	t.Logf("%d predictions while the kubelet evicted", len(preds))
	checkPredictions(t, preds, klog.rankings(), messages)
	p, err := e.client.CoreV1().Pods("kube-system").Get(ctx, base, metav1.GetOptions{})
	if err != nil || p.Status.Phase != corev1.PodRunning {
		t.Errorf("critical hog: %v, phase %v: want Running (explain marks critical pods as never evicted)", err, phaseOf(p))
	}
}

// createCriticalHog starts a system-node-critical stress pod in kube-system and deletes it at cleanup,
// then waits for the node to leave MemoryPressure so that later tests can schedule pods.
func createCriticalHog(ctx context.Context, t *testing.T, e *env, prefix, rate, target string) string {
	t.Helper()
	hog := stressPod("kube-system", "", []string{"mem", "--rate", rate, "--target", target}, "", false)
	hog.GenerateName = prefix
	hog.Spec.PriorityClassName = "system-node-critical"
	created, err := e.client.CoreV1().Pods("kube-system").Create(ctx, hog, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deleteAndWait(t, e, "kube-system", created.Name)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		waitNoMemoryPressure(ctx, t, e)
	})
	waitRunning(ctx, t, e, "kube-system", created.Name)
	return created.Name
}

// waitPodMemory waits until the kubelet's Summary shows the pod's working set at least min bytes.
func waitPodMemory(ctx context.Context, t *testing.T, e *env, ns, name string, min uint64) {
	t.Helper()
	poll(ctx, t, "pod "+ns+"/"+name+" working set in the Summary", func() (bool, string) {
		s, err := cli.FetchSnapshot(ctx, e.client, e.node.Name())
		if err != nil {
			return false, err.Error()
		}
		for _, ps := range s.Summary.Pods {
			if ps.PodRef.Namespace == ns && ps.PodRef.Name == name && ps.Memory != nil && ps.Memory.WorkingSetBytes != nil {
				return *ps.Memory.WorkingSetBytes >= min, formatMi(*ps.Memory.WorkingSetBytes)
			}
		}
		return false, "no stats"
	})
}

// kubeletLogReader reads the eviction manager's decisions from the kubelet's log, from where it was
// when the test started: the kubelet logs every ranking ("pods ranked for eviction") and every eviction
// ("pod is evicted successfully") at the moment it makes them, unlike pod status updates, which the
// status manager writes asynchronously and can reorder.
type kubeletLogReader struct {
	t      *testing.T
	path   string
	offset int64
}

func kubeletLog(t *testing.T, e *env) *kubeletLogReader {
	t.Helper()
	for _, p := range e.node.Processes() {
		if p.Name == "kubelet" {
			fi, err := os.Stat(p.Log)
			if err != nil {
				t.Fatal(err)
			}
			return &kubeletLogReader{t: t, path: p.Log, offset: fi.Size()}
		}
	}
	t.Fatal("no kubelet process in the node harness")
	return nil
}

var (
	rankedLine  = regexp.MustCompile(`^I(\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ eviction_manager\.go:\d+\] "Eviction manager: pods ranked for eviction" pods=\[(.*)\]`)
	evictedLine = regexp.MustCompile(`"Eviction manager: pod is evicted successfully" pod="([^"]+)"`)
)

func (k *kubeletLogReader) lines() []string {
	f, err := os.Open(k.path)
	if err != nil {
		k.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(k.offset, 0); err != nil {
		k.t.Fatal(err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		k.t.Fatal(err)
	}
	return strings.Split(string(data), "\n")
}

// evicted returns the pods of ns the kubelet evicted, in order (concurrent syncs log a pod twice).
func (k *kubeletLogReader) evicted(ns string) []string {
	var out []string
	for _, l := range k.lines() {
		if m := evictedLine.FindStringSubmatch(l); m != nil && strings.HasPrefix(m[1], ns+"/") && !contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// ranking is one "pods ranked for eviction" line.
type ranking struct {
	at   time.Time
	pods []string
}

func (k *kubeletLogReader) rankings() []ranking {
	var out []ranking
	year := time.Now().Year()
	for _, l := range k.lines() {
		m := rankedLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		at, err := time.ParseInLocation("2006 0102 15:04:05.000000", fmt.Sprintf("%d %s", year, m[1]), time.Local)
		if err != nil {
			k.t.Fatalf("kubelet log time %q: %v", m[1], err)
		}
		var pods []string
		for _, p := range strings.Split(m[2], ",") {
			pods = append(pods, strings.Trim(p, `"`))
		}
		out = append(out, ranking{at: at, pods: pods})
	}
	return out
}

// evictionMessages waits until the evicted pods' statuses carry the kubelet's message.
func evictionMessages(ctx context.Context, t *testing.T, e *env, ns string, pods []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	poll(ctx, t, "evicted pods Failed with their message", func() (bool, string) {
		for _, key := range pods {
			p, err := e.client.CoreV1().Pods(ns).Get(ctx, strings.TrimPrefix(key, ns+"/"), metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if p.Status.Phase != corev1.PodFailed || p.Status.Reason != "Evicted" {
				return false, key + " " + string(p.Status.Phase)
			}
			out[key] = p.Status.Message
		}
		return true, ""
	})
	return out
}

// predictNext runs `kubectl pressure snapshot` and `explain --snapshot -o json`; when explain sees a
// threshold met it returns explain's order and its first candidate victim: the first non-critical pod
// whose container still runs in the snapshot. A pod the kubelet has just killed keeps status Running
// for a moment, but its container stats are gone from the Summary; the kubelet no longer ranks it.
func predictNext(ctx context.Context, t *testing.T, e *env, ns string) (prediction, bool) {
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
	snap, err := cli.LoadSnapshotDir(os.DirFS(dir), dir)
	if err != nil {
		t.Fatalf("reload snapshot: %v", err)
	}
	running := map[string]bool{}
	for _, ps := range snap.Summary.Pods {
		for _, c := range ps.Containers {
			if c.Memory != nil && c.Memory.WorkingSetBytes != nil {
				running[ps.PodRef.Namespace+"/"+ps.PodRef.Name] = true
			}
		}
	}
	pr := prediction{at: at, done: time.Now(), critical: map[string]bool{}, messages: map[string]string{}}
	for _, v := range r.Kubelet.EvictionOrder {
		pr.order = append(pr.order, v.Pod)
		pr.critical[v.Pod] = v.Critical
		if !v.Critical && running[v.Pod] {
			pr.messages[v.Pod] = v.Message
			if pr.pod == "" {
				pr.pod, pr.message = v.Pod, v.Message
			}
		}
	}
	if pr.pod == "" || !strings.HasPrefix(pr.pod, ns+"/") {
		// Nothing to evict, or a pod of another test first: the kubelet's next victim is not one we watch.
		return prediction{}, false
	}
	return pr, true
}

// numbers masks the amounts that change between two stats samples (available, usage) in a message;
// usage masks only the pods' usage, available reads the node's available amount.
var (
	numbers   = regexp.MustCompile(`(available: |was using )[0-9.]+[A-Za-z]*`)
	usage     = regexp.MustCompile(`(was using )[0-9.]+[A-Za-z]*`)
	available = regexp.MustCompile(`available: ([0-9.]+[A-Za-z]*)`)
)

// checkPredictions compares explain's predictions with the kubelet's decisions in two ways.
//
// Next ranking: every prediction is compared with the kubelet's first ranking logged after it: on the
// pods both ranked (the kubelet may have stopped a pod whose status still says Running, or see a pod
// explain did not), the orders must be equal, critical pods included. When the kubelet then evicted
// the pod explain put first (the first non-critical pod still running in the snapshot), the messages must
// be equal once the amounts sampled at different moments are masked.
//
// Same sample: the Summary explain reads has the node stats of the kubelet's last eviction sync (only
// that sync refreshes them; explain sees a threshold met mostly right after the kubelet acted on it).
// When explain's message for a pod the kubelet evicted reports the same available amount as the
// kubelet's message, both were computed from the same node sample: the node parts of the messages must be
// equal, and the container parts too with the usage masked, unless the pod's own stats were refreshed
// since (its container stopping no longer uses more than its request, so explain writes no container part).
//
// At least one prediction must have been compared on two or more pods, and one message in either way.
func checkPredictions(t *testing.T, preds []prediction, ranks []ranking, messages map[string]string) {
	t.Helper()
	compared, messagesCompared := 0, 0
	for _, pr := range preds {
		var next *ranking
		for i := range ranks {
			if ranks[i].at.After(pr.done) {
				next = &ranks[i]
				break
			}
		}
		if next == nil {
			continue
		}
		ours, theirs := common(pr.order, next.pods), common(next.pods, pr.order)
		if len(ours) < 2 {
			continue
		}
		compared++
		if strings.Join(ours, " ") != strings.Join(theirs, " ") {
			t.Errorf("explain at %s ranked %v; the kubelet's next ranking at %s was %v (common pods: explain %v, kubelet %v)",
				pr.at.Format(time.RFC3339Nano), pr.order, next.at.Format(time.RFC3339Nano), next.pods, ours, theirs)
			continue
		}
		msg, evicted := messages[pr.pod]
		if !evicted || next.firstVictim(pr.critical) != pr.pod {
			continue // the kubelet's next eviction was another pod (one explain did not list as running)
		}
		messagesCompared++
		if got, want := numbers.ReplaceAllString(msg, "${1}N"), numbers.ReplaceAllString(pr.message, "${1}N"); got != want {
			t.Errorf("message of %s: kubelet %q, explain %q (amounts masked: %q vs %q)", pr.pod, msg, pr.message, got, want)
		} else {
			t.Logf("explain at %s: %s first, message %q; the kubelet: %q", pr.at.Format(time.RFC3339Nano), pr.pod, pr.message, msg)
		}
	}
	sameSample := compareSameSample(t, preds, messages)
	if compared == 0 {
		t.Errorf("no explain run saw a threshold met before one of the kubelet's rankings (%d predictions, %d rankings)",
			len(preds), len(ranks))
	}
	if messagesCompared+sameSample == 0 {
		t.Errorf("no prediction's victim could be compared with the kubelet's message (%d predictions)", len(preds))
	}
	t.Logf("%d predictions made under pressure, %d compared with the kubelet's next ranking, %d messages compared; "+
		"%d messages compared on the kubelet's own stats sample", len(preds), compared, messagesCompared, sameSample)
}

// compareSameSample checks explain's message for every evicted pod against the kubelet's when both
// report the same available amount (see checkPredictions) and returns how many it compared.
func compareSameSample(t *testing.T, preds []prediction, messages map[string]string) int {
	t.Helper()
	pods := make([]string, 0, len(messages))
	for pod := range messages {
		pods = append(pods, pod)
	}
	sort.Strings(pods)
	n := 0
	for _, pr := range preds {
		for _, pod := range pods {
			theirs := messages[pod]
			ours, ok := pr.messages[pod]
			if !ok || amount(ours) == "" || amount(ours) != amount(theirs) {
				continue
			}
			n++
			switch {
			case nodePart(ours) != nodePart(theirs):
				t.Errorf("message of %s on the same stats sample (available %s): kubelet %q, explain at %s %q",
					pod, amount(ours), theirs, pr.at.Format(time.RFC3339Nano), ours)
			case !strings.Contains(ours, containerClause) && strings.Contains(theirs, containerClause):
				// The pod's own stats were refreshed after the kubelet's sync: its container was stopping
				// and no longer used more than its request. The node part is the same sample.
				t.Logf("explain at %s, same node sample as the kubelet's eviction of %s (its container stopping since): %q",
					pr.at.Format(time.RFC3339Nano), pod, ours)
			case usage.ReplaceAllString(ours, "${1}N") != usage.ReplaceAllString(theirs, "${1}N"):
				t.Errorf("message of %s on the same stats sample (available %s, usage masked): kubelet %q, explain at %s %q",
					pod, amount(ours), theirs, pr.at.Format(time.RFC3339Nano), ours)
			default:
				t.Logf("explain at %s, same stats sample as the kubelet's eviction of %s: message %q", pr.at.Format(time.RFC3339Nano), pod, ours)
			}
		}
	}
	return n
}

// containerClause starts the part of an eviction message about the pod's containers, which the kubelet
// writes for each container using more than its request.
const containerClause = "Container "

// nodePart is the part of an eviction message about the node: signal, threshold and available amount.
func nodePart(msg string) string {
	if i := strings.Index(msg, containerClause); i >= 0 {
		return msg[:i]
	}
	return msg
}

// amount is the available amount a message reports ("" if none).
func amount(msg string) string {
	if m := available.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// firstVictim is the pod the kubelet evicts after this ranking: the first one that is not critical.
func (r ranking) firstVictim(critical map[string]bool) string {
	for _, p := range r.pods {
		if !critical[p] {
			return p
		}
	}
	return ""
}

// common returns the elements of a that are also in b, in a's order.
func common(a, b []string) []string {
	var out []string
	for _, x := range a {
		if contains(b, x) {
			out = append(out, x)
		}
	}
	return out
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
