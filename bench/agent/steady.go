package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/source/procfs"
	"github.com/kube-pressure/pressure/test/chartinstall"
)

// steadyResult is the agent's cost over the window with the sleeping pods on the node.
type steadyResult struct {
	c       contender
	round   int
	pods    int
	window  time.Duration
	cpu     time.Duration // utime+stime over the window
	rssAvg  int64
	rssMax  int64
	hwm     int64
	samples int
}

// steady puts o.steadyPods sleeping pods on the node, then measures the installed agent's process
// (found through its container's cgroup) for o.steadyFor after a 10 s warm-up.
func (b *bench) steady(ctx context.Context, o options, rep *report) error {
	if err := b.resetNode(ctx); err != nil {
		return err
	}
	logf("steady state: creating %d sleeping pods", o.steadyPods)
	for i := range o.steadyPods {
		p := benchPod(fmt.Sprintf("idle-%02d", i), []string{"sleep"}, "", false)
		if _, err := b.client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s: %w", p.Name, err)
		}
	}
	defer func() {
		for i := range o.steadyPods {
			_ = b.client.CoreV1().Pods(ns).Delete(context.Background(), fmt.Sprintf("idle-%02d", i),
				metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		}
	}()
	// 5 s a pod, at least 5 minutes: on a loaded 2-core host the kubelet started 107 pods in more than
	// 5 minutes (its status updates wait for its client rate limiter).
	wctx, cancel := context.WithTimeout(ctx, max(5*time.Minute, time.Duration(o.steadyPods)*5*time.Second))
	defer cancel()
	err := b.waitPods(wctx, "sleeping pods Running", func(ps []corev1.Pod) bool {
		n := 0
		for _, p := range ps {
			if p.Status.Phase == corev1.PodRunning {
				n++
			}
		}
		return n >= o.steadyPods+len(neighbours)
	})
	if err != nil {
		return err
	}
	for round := 1; round <= max(o.steadyRounds, 1); round++ {
		for _, c := range o.contenders {
			if !c.agent {
				continue
			}
			r, err := b.measureSteady(ctx, c, o)
			if err != nil {
				return err
			}
			r.round = round
			rep.steady = append(rep.steady, r)
			logf("steady round %d %s: %d pods, CPU %s in %s, RSS avg %d MiB max %d MiB", round, c.name, r.pods, r.cpu, r.window, r.rssAvg>>20, r.rssMax>>20)
		}
	}
	return nil
}

func (b *bench) measureSteady(ctx context.Context, c contender, o options) (steadyResult, error) {
	r := steadyResult{c: c, pods: o.steadyPods, window: o.steadyFor}
	// A new agent pod with the contender's values, started with the sleeping pods already on the node.
	if err := b.agentOff(ctx); err != nil {
		return r, err
	}
	a, err := b.agentOn(ctx, c)
	if err != nil {
		return r, err
	}
	pid, err := a.PID(b.node.PodsMemoryCgroupDir())
	if err != nil {
		return r, err
	}
	logf("steady %s: agent pod %s, host pid %d", c.name, a.Pod.Name, pid)
	select {
	case <-ctx.Done():
		return r, ctx.Err()
	case <-time.After(10 * time.Second):
	}
	proc := procfs.NewReader("")
	st0, err := proc.ProcessStat(pid)
	if err != nil {
		return r, err
	}
	profiled := make(chan error, 1)
	if c.profile {
		go func() { profiled <- b.saveProfile(ctx, a, o, r) }()
	}
	end := time.Now().Add(o.steadyFor)
	var sum int64
	for time.Now().Before(end) {
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(time.Second):
		}
		m, err := proc.ProcessMemory(pid)
		if err != nil {
			return r, err
		}
		sum += m.RSS
		r.samples++
		r.rssMax = max(r.rssMax, m.RSS)
	}
	st1, err := proc.ProcessStat(pid)
	if err != nil {
		return r, err
	}
	r.cpu = st1.CPU() - st0.CPU()
	r.rssAvg = sum / int64(max(r.samples, 1))
	m, err := proc.ProcessMemory(pid)
	if err != nil {
		return r, err
	}
	r.hwm = m.HWM
	if c.profile {
		err = <-profiled
	}
	return r, err
}

// saveProfile takes the agent's CPU profile over the steady window (its /debug/pprof/profile, through
// the API server's pod proxy) and writes it to o.profileDir.
func (b *bench) saveProfile(ctx context.Context, a *chartinstall.Agent, o options, r steadyResult) error {
	secs := strconv.Itoa(int(o.steadyFor.Seconds()))
	body, err := a.Get(ctx, "/debug/pprof/profile", map[string]string{"seconds": secs})
	if err != nil {
		return fmt.Errorf("contender %s: cpu profile: %w", r.c.name, err)
	}
	path := filepath.Join(o.profileDir, fmt.Sprintf("agent-%s-%d-pods-%s.pprof", r.c.name, r.pods, time.Now().UTC().Format("150405")))
	if err := os.WriteFile(path, body, 0o644); err != nil {
		return fmt.Errorf("contender %s: cpu profile: %w", r.c.name, err)
	}
	logf("steady %s: agent CPU profile of %ss: %s (go tool pprof -top %s)", r.c.name, secs, path, path)
	return nil
}

// steadyMedians is a line per agent contender: the median CPU % over its rounds, and its ratio to A's.
func steadyMedians(rs []steadyResult) string {
	by := map[string][]float64{}
	var names []string
	for _, r := range rs {
		if _, ok := by[r.c.name]; !ok {
			names = append(names, r.c.name)
		}
		by[r.c.name] = append(by[r.c.name], 100*r.cpu.Seconds()/r.window.Seconds())
	}
	med := func(v []float64) float64 {
		s := append([]float64(nil), v...)
		sort.Float64s(s)
		if len(s)%2 == 1 {
			return s[len(s)/2]
		}
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	var b strings.Builder
	b.WriteString("\nMedian CPU % of one core over the rounds:")
	for _, n := range names {
		fmt.Fprintf(&b, " %s %.2f %% (%d rounds)", n, med(by[n]), len(by[n]))
		if a, ok := by["A"]; ok && n != "A" && med(by[n]) > 0 {
			fmt.Fprintf(&b, ", A/%s = %.2f", n, med(a)/med(by[n]))
		}
		b.WriteString(";")
	}
	return b.String() + "\n"
}
