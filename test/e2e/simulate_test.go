package e2e

// End-to-end test of `kubectl pressure record` and `kubectl pressure simulate` on the package's real node
// (TestMain in main_test.go: kubelet v1.37.2, cgroup v1, memcg notifier on, 200Mi hard thresholds):
// record memory pressure while the real kubelet evicts, then check that simulate, replaying the
// recording, predicts the kubelet's victims in the kubelet's order, each decided within one housekeeping
// interval of the kubelet's decision. The recordings in internal/cli/testdata/recordings were made by
// these tests (PRESSURE_KEEP_RECORDING=DIR).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kube-pressure/pressure/internal/cli"
	"github.com/kube-pressure/pressure/test/cluster"
)

// housekeeping is the tolerance on predicted times: one period of the kubelet's eviction loop, which is
// its monitoring interval (10 s) plus the synchronize's own time (tens of ms). Every prediction is held
// to it: since record writes the kubelet's stats times to the millisecond (stats-times.json), simulate
// places the recorded loop on its syncs, and the early predictions this test once exempted (a simulated
// loop sync placed just after a notified eviction where the kubelet's ran before it; docs/simulate.md,
// "step, run 5" and "slow ramp, run 6") are no longer excused.
const housekeeping = 10*time.Second + 500*time.Millisecond

// simulation is the part of `simulate -o json` the test reads.
type simulation struct {
	Runs []struct {
		Name   string `json:"name"`
		Events []struct {
			At       time.Time `json:"at"`
			Actor    string    `json:"actor"`
			Kind     string    `json:"kind"`
			Subject  string    `json:"subject"`
			Detail   string    `json:"detail"`
			Eviction *struct {
				Pod      string `json:"pod"`
				StatsAge string `json:"statsAge"`
			} `json:"eviction"`
		} `json:"events"`
	} `json:"runs"`
	Recorded []struct {
		Pod string    `json:"pod"`
		At  time.Time `json:"at"`
	} `json:"recorded"`
}

// timedEviction is one eviction: the pod and when.
type timedEviction struct {
	pod string
	at  time.Time
	// notified: the simulated kubelet decided on a memcg notification (false: its loop; unknown for the
	// real kubelet's).
	notified bool
}

// One episode checks both predictions of the kubelet: simulate's, replaying the recording after it,
// and explain's, polled every 100 ms while the kubelet evicts (the subtest "explain named each next
// victim"). They were two tests of the same episode until 2026-12-08 (the explain one was
// TestExplainPredictsTheKubeletsNextVictimUnderRealPressure, 151 s of the real node; issue 31).
func TestSimulatePredictsTheKubeletsEvictionsOfARealRecording(t *testing.T) {
	// Two critical hogs keep the pressure on while the kubelet evicts the other pods one per cycle; they
	// are never evicted themselves. The base hog takes the pods cgroup (2Gi, threshold 200Mi: pods may use
	// 1848Mi) close to the threshold; the slow hog (4Mi/s) then crosses it, and again after every
	// eviction, which the kubelet's memcg notifier turns into a sync at once. Between two evictions the
	// Summary (refreshed by the kubelet's eviction sync) still shows the threshold met while the next
	// victim runs: explain's prediction of it can be checked. Together the hogs stay above the threshold,
	// so every other pod is evicted in the end.
	var base string
	var preds []prediction
	explain := &episodeWatch{
		name: "explain named each next victim",
		poll: func(ctx context.Context, t *testing.T, e *env, ns string) {
			if pr, ok := predictNext(ctx, t, e, ns); ok {
				preds = append(preds, pr)
			}
		},
		check: func(ctx context.Context, t *testing.T, e *env, ns string, klog *kubeletLogReader) {
			checkExplainEpisode(ctx, t, e, ns, klog, base, preds)
		},
	}
	recordAndSimulate(t, "simulate", func(ctx context.Context, t *testing.T, e *env) {
		base = createCriticalHog(ctx, t, e, "simulate-critical-base-", "128Mi", "1600Mi")
		waitPodMemory(ctx, t, e, "kube-system", base, 1550<<20)
		createCriticalHog(ctx, t, e, "simulate-critical-slow-", "4Mi", "300Mi")
	}, explain)
}

func TestSimulatePredictsTheKubeletsEvictionsOfARealRecordingAfterAStep(t *testing.T) {
	// A critical base, then a critical hog that takes 380Mi as fast as it can: after the notifier's
	// first eviction the pods stay below the threshold without crossing it again, so the kubelet's 10 s
	// housekeeping sync evicts the next pod, and then, after each pod's cleanup, the next at once, until
	// every other pod is evicted (the pods' 140Mi do not bring available back to 200Mi).
	recordAndSimulate(t, "simulate-step", func(ctx context.Context, t *testing.T, e *env) {
		base := createCriticalHog(ctx, t, e, "simulate-step-base-", "128Mi", "1470Mi")
		waitPodMemory(ctx, t, e, "kube-system", base, 1450<<20)
		time.Sleep(5 * time.Second)
		createCriticalHog(ctx, t, e, "simulate-step-", "0", "380Mi")
	}, nil)
}

// episodeWatch is a second check of a recorded episode: poll runs every 100 ms while the kubelet evicts,
// check once the recording has stopped, as a subtest named name (before simulate's checks, which stop
// the test at the first wrong order).
type episodeWatch struct {
	name  string
	poll  func(ctx context.Context, t *testing.T, e *env, ns string)
	check func(ctx context.Context, t *testing.T, e *env, ns string, klog *kubeletLogReader)
}

// recordAndSimulate records the node while pressure (started by the function) makes the kubelet evict
// the QoS pods of a new namespace, then simulates the recording and compares; watch, when not nil,
// checks the same episode its own way.
func recordAndSimulate(t *testing.T, prefix string, pressure func(ctx context.Context, t *testing.T, e *env), watch *episodeWatch) {
	e := requireNode(t)
	// An earlier test's agent run in-process (no uninstall hook) may have left its taint, and an earlier
	// test its pods: the QoS pods here tolerate neither.
	resetNode(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, prefix)
	victims := startQoSPods(ctx, t, e, ns)
	klog := kubeletLog(t, e)
	dir := filepath.Join(t.TempDir(), "recording")
	stopRecording := record(ctx, t, e, dir)
	time.Sleep(15 * time.Second) // calm before the pressure, in the recording
	pressure(ctx, t, e)
	deadline := time.Now().Add(4 * time.Minute)
	for len(klog.evicted(ns)) < len(victims) && time.Now().Before(deadline) {
		if watch == nil {
			time.Sleep(time.Second)
			continue
		}
		watch.poll(ctx, t, e, ns)
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(15 * time.Second) // the tail: the kubelet has nothing left to evict
	stopRecording()
	if watch != nil {
		t.Run(watch.name, func(t *testing.T) { watch.check(ctx, t, e, ns, klog) })
	}

	real := klog.evictedAt(ns)
	if len(real) != len(victims) {
		t.Fatalf("the kubelet evicted %v, want all of %v", real, victims)
	}
	keepRecording(t, os.Getenv("PRESSURE_KEEP_RECORDING"), dir, klog, real)
	t.Cleanup(func() { // before t.TempDir's own cleanup removes the recording
		if t.Failed() {
			keep := filepath.Join(cluster.CacheDir(), "kept-recordings", time.Now().UTC().Format("20060102T150405Z"))
			keepRecording(t, keep, dir, klog, real)
			t.Logf("recording, the kubelet's eviction log and its evictions kept in %s", filepath.Join(keep, t.Name()))
		}
	})
	klog.logCleanups(t)
	sim := simulate(ctx, t, e, dir)
	var predicted []timedEviction
	for _, run := range sim.Runs {
		if run.Name != "kubelet" {
			continue
		}
		for _, ev := range run.Events {
			t.Logf("simulated %s %-9s %-10s %s: %s", ev.At.Format("15:04:05.0"), ev.Actor, ev.Kind, ev.Subject, ev.Detail)
			if ev.Kind == "evict" && strings.HasPrefix(ev.Subject, ns+"/") {
				predicted = append(predicted, timedEviction{ev.Eviction.Pod, ev.At, strings.Contains(ev.Detail, "memcg notification")})
			}
		}
	}
	decided := klog.decisions(real)
	for i, r := range real {
		t.Logf("the kubelet decided to evict %s at %s (ranking), evicted it at %s", r.pod,
			decided[i].at.Format("15:04:05.000"), r.at.Format("15:04:05.000"))
	}
	if times, _ := filepath.Glob(filepath.Join(dir, "*", cli.FileStatsTimes)); len(times) == 0 {
		t.Errorf("no snapshot of the recording has %s: the kubelet's /metrics/resource did not answer record", cli.FileStatsTimes)
	}
	compareEvictions(t, predicted, decided)
	checkRecorded(t, sim, real)
}

// record runs `kubectl pressure record` in the background; the returned function stops it as Ctrl-C
// does (its context is cancelled) and checks that it stopped cleanly, keeping what it recorded.
func record(ctx context.Context, t *testing.T, e *env, dir string) func() {
	t.Helper()
	rctx, stop := context.WithCancel(ctx)
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &stderr}
		done <- cli.Run(rctx, streams, []string{"--kubeconfig", e.cp.Kubeconfig(), "record", e.node.Name(),
			"--every", "1s", "--for", "8m", "--out", dir})
	}()
	return func() {
		stop()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("record: %v\n%s", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("record did not stop within 30s of the interruption\n%s", stderr.String())
		}
		t.Logf("record:\n%s", stderr.String())
		if !strings.Contains(stderr.String(), "interrupted, kept what was recorded") {
			t.Errorf("record's last line does not say it was interrupted and kept the recording:\n%s", stderr.String())
		}
	}
}

// simulate runs `kubectl pressure simulate DIR -o json` (and logs the text output).
func simulate(ctx context.Context, t *testing.T, e *env, dir string) simulation {
	t.Helper()
	text, err := kubectlPressure(ctx, t, e, "simulate", dir)
	if err != nil {
		t.Fatalf("simulate: %v", err)
	}
	t.Logf("simulate %s:\n%s", dir, text)
	out, err := kubectlPressure(ctx, t, e, "simulate", dir, "-o", "json")
	if err != nil {
		t.Fatalf("simulate -o json: %v", err)
	}
	var s simulation
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("simulate -o json is not JSON: %v", err)
	}
	return s
}

// compareEvictions requires the same victims in the same order, each decided within one
// housekeeping interval of the kubelet's decision.
func compareEvictions(t *testing.T, predicted, real []timedEviction) {
	t.Helper()
	var p, r []string
	for _, x := range predicted {
		p = append(p, x.pod)
	}
	for _, x := range real {
		r = append(r, x.pod)
	}
	if strings.Join(p, " ") != strings.Join(r, " ") {
		t.Fatalf("simulate predicts the evictions %v, the kubelet evicted %v", p, r)
	}
	for i := range real {
		d := predicted[i].at.Sub(real[i].at)
		t.Logf("%s: predicted %s, the kubelet %s: %+.1fs", real[i].pod, predicted[i].at.Format("15:04:05.0"),
			real[i].at.Format("15:04:05.0"), d.Seconds())
		if d.Abs() > housekeeping {
			t.Errorf("%s: predicted at %s, the kubelet evicted it at %s: %s apart, more than one housekeeping interval (%s)",
				real[i].pod, predicted[i].at.Format(time.RFC3339Nano), real[i].at.Format(time.RFC3339Nano), d, housekeeping)
		}
	}
}

// checkRecorded requires simulate's view of the recording's own evictions (DisruptionTarget times,
// whole seconds) to match the kubelet's log.
func checkRecorded(t *testing.T, s simulation, real []timedEviction) {
	t.Helper()
	got := map[string]time.Time{}
	for _, r := range s.Recorded {
		got[r.Pod] = r.At
	}
	for _, r := range real {
		at, ok := got[r.pod]
		if !ok {
			t.Errorf("simulate does not list %s among the recording's evictions (%v)", r.pod, s.Recorded)
			continue
		}
		if d := at.Sub(r.at); d < -time.Second || d > time.Second {
			t.Errorf("recorded eviction of %s at %s, the kubelet's log says %s", r.pod, at, r.at)
		}
	}
}

var evictedAtLine = regexp.MustCompile(`^I(\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ eviction_manager\.go:\d+\] "Eviction manager: pod is evicted successfully" pod="([^"]+)"`)

// evictedAt returns the pods of ns the kubelet evicted, in order, with the time of the log line.
func (k *kubeletLogReader) evictedAt(ns string) []timedEviction {
	var out []timedEviction
	seen := map[string]bool{}
	year := time.Now().Year()
	for _, l := range k.lines() {
		m := evictedAtLine.FindStringSubmatch(l)
		if m == nil || !strings.HasPrefix(m[2], ns+"/") || seen[m[2]] {
			continue
		}
		at, err := time.ParseInLocation("2006 0102 15:04:05.000000", fmt.Sprintf("%d %s", year, m[1]), time.Local)
		if err != nil {
			k.t.Fatalf("kubelet log time %q: %v", m[1], err)
		}
		seen[m[2]] = true
		out = append(out, timedEviction{pod: m[2], at: at})
	}
	return out
}

// decisions returns, for each eviction, the time of the kubelet's last ranking before it that put the
// pod first among the pods it could evict (the critical pods of these tests are in kube-system).
func (k *kubeletLogReader) decisions(evictions []timedEviction) []timedEviction {
	ranks := k.rankings()
	out := make([]timedEviction, len(evictions))
	for i, ev := range evictions {
		out[i] = ev
		for _, r := range ranks {
			if r.at.After(ev.at) {
				break
			}
			for _, p := range r.pods {
				if strings.HasPrefix(p, "kube-system/") {
					continue
				}
				if p == ev.pod {
					out[i].at = r.at
				}
				break
			}
		}
	}
	return out
}

var cleanupLine = regexp.MustCompile(`^I(\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ eviction_manager\.go:\d+\] "Eviction manager: (pods evicted, waiting for pod to be cleaned up|pods successfully cleaned up|timed out waiting for pods to be cleaned up)"`)

// logCleanups logs the kubelet's waits for evicted pods to be cleaned up (its main loop after an
// eviction), to measure the cleanup time the simulator models.
func (k *kubeletLogReader) logCleanups(t *testing.T) {
	for _, l := range k.lines() {
		if m := cleanupLine.FindStringSubmatch(l); m != nil {
			t.Logf("kubelet %s: %s", m[1], m[2])
		}
	}
}

// keepRecording copies the recording, the kubelet's eviction-manager log lines and the kubelet's
// evictions (kubelet-evictions.json: pod, decided, evicted) to keep/<test name> unless keep is "":
// $PRESSURE_KEEP_RECORDING (how internal/cli/testdata/recordings was made), and the cache's
// kept-recordings after a failure.
func keepRecording(t *testing.T, keep, dir string, k *kubeletLogReader, real []timedEviction) {
	if keep == "" {
		return
	}
	keep = filepath.Join(keep, t.Name())
	if err := os.MkdirAll(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", dir+"/.", keep).CombinedOutput(); err != nil {
		t.Fatalf("keep recording: %v: %s", err, out)
	}
	var lines []string
	for _, l := range k.lines() {
		if strings.Contains(l, "eviction_manager.go") || strings.Contains(l, "Eviction manager") {
			lines = append(lines, l)
		}
	}
	if err := os.WriteFile(filepath.Join(keep, "kubelet-eviction.log"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type eviction struct {
		Pod     string    `json:"pod"`
		Decided time.Time `json:"decided"`
		Evicted time.Time `json:"evicted"`
	}
	var evs []eviction
	for i, d := range k.decisions(real) {
		evs = append(evs, eviction{Pod: d.pod, Decided: d.at.UTC(), Evicted: real[i].at.UTC()})
	}
	data, err := json.MarshalIndent(evs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keep, "kubelet-evictions.json"), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recording kept in %s", keep)
}
