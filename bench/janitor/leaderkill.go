package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/test/cluster"
)

// leaderKill runs two janitor replicas with leader election on a backlog of o.pods evicted pods,
// SIGKILLs the leader once half of them are deleted and checks that the other finishes with every
// pod deleted exactly once.
func leaderKill(ctx context.Context, o options, w *workload, watch *deleteWatch, cp *cluster.ControlPlane, bin, dir string) error {
	if err := evictLogged(ctx, w, "k"); err != nil {
		return err
	}
	began := time.Now()
	var reps [2]*janitorProc
	for i, name := range []string{"janitor-ha-a", "janitor-ha-b"} {
		j, err := startJanitorProcess(ctx, bin, cp.Kubeconfig(), dir, o, janitorSpec{name: name, leaderElect: true})
		if err != nil {
			return err
		}
		defer j.stop()
		reps[i] = j
	}
	leader, standby, err := waitLeader(ctx, reps, o.timeout)
	if err != nil {
		return err
	}
	if err := watch.waitDeleted(ctx, began, o.pods/2, o.timeout); err != nil {
		return err
	}
	atKill, err := leader.scrape()
	if err != nil {
		return err
	}
	if err := leader.kill(); err != nil {
		return err
	}
	killed := time.Now()
	werr := watch.waitRemaining(ctx, w, 0, o.timeout)
	final, err := standby.scrape()
	if err != nil {
		return err
	}
	leader.stop()
	standby.stop()
	return reportLeaderKill(o, watch, began, killed, leader, standby, atKill, final, werr)
}

// waitLeader returns the replica whose pressure_janitor_leader is 1, and the other.
func waitLeader(ctx context.Context, reps [2]*janitorProc, timeout time.Duration) (leader, standby *janitorProc, err error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for i, j := range reps {
			if s, err := j.scrape(); err == nil && s["pressure_janitor_leader"] == 1 {
				return j, reps[1-i], nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil, nil, fmt.Errorf("no janitor replica leads after %s", timeout)
}

// logSummary is what a replica's log says it did: DELETE requests per pod (a line is written
// before each), and when it took the lease and sent its first DELETE.
type logSummary struct {
	attempts          map[string]int
	terminating       int // DELETEs of pods already marked for deletion (half-deleted)
	started, firstDel time.Time
}

func readLog(path string) (logSummary, error) {
	s := logSummary{attempts: map[string]int{}}
	f, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Time                time.Time
			Msg, Pod, Namespace string
			Terminating         bool
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue // klog's lines are JSON too; anything else is not ours
		}
		switch line.Msg {
		case "janitor started":
			s.started = line.Time
		case "deleting terminal pod":
			if s.firstDel.IsZero() {
				s.firstDel = line.Time
			}
			s.attempts[line.Namespace+"/"+line.Pod]++
			if line.Terminating {
				s.terminating++
			}
		}
	}
	return s, sc.Err()
}

func reportLeaderKill(o options, watch *deleteWatch, began, killed time.Time, leader, standby *janitorProc,
	atKill, final map[string]float64, werr error) error {
	ll, err := readLog(leader.logPath)
	if err != nil {
		return err
	}
	sl, err := readLog(standby.logPath)
	if err != nil {
		return err
	}
	twice, lreq, sreq := 0, 0, 0
	for pod, n := range ll.attempts {
		lreq += n
		if n+sl.attempts[pod] > 1 {
			twice++
		}
	}
	for pod, n := range sl.attempts {
		sreq += n
		if _, ok := ll.attempts[pod]; !ok && n > 1 {
			twice++
		}
	}
	fmt.Printf("leader kill: %d pods, two replicas (lease 15s/10s/2s); leader SIGKILLed after %d deletions, %s after the start\n",
		o.pods, watch.countSince(began, killed), killed.Sub(began).Round(time.Millisecond))
	answered := sum(atKill, metricDeleted) + sum(atKill, metricNotApplied) + sum(atKill, metricErrors, `operation="delete"`)
	fmt.Printf("leader kill: killed leader: %d DELETEs logged; answers scraped just before the kill: %s (so %.0f in flight at the kill, or answered between scrape and kill)\n",
		lreq, answers(atKill), float64(lreq)-answered)
	fmt.Printf("leader kill: survivor: %d DELETEs logged (%d of pods already marked for deletion); answers: %s\n",
		sreq, sl.terminating, answers(final))
	fmt.Printf("leader kill: %d DELETE requests for %d pods, %d pods sent a DELETE more than once; %d pods deleted (watch), %d left\n",
		lreq+sreq, o.pods, twice, watch.countSince(began, time.Now()), len(watch.store.List()))
	for _, obj := range watch.store.List() {
		p := obj.(*v1.Pod)
		fmt.Printf("leader kill: left: %s/%s phase %s deletionTimestamp %v grace %v finalizers %v resourceVersion %s\n", p.Namespace, p.Name,
			p.Status.Phase, p.DeletionTimestamp, ptr.Deref(p.DeletionGracePeriodSeconds, -1), p.Finalizers, p.ResourceVersion)
	}
	fmt.Printf("leader kill: takeover: kill → survivor leads %s → its first DELETE %s; longest pause between deletions %s\n",
		sl.started.Sub(killed).Round(time.Millisecond), sl.firstDel.Sub(killed).Round(time.Millisecond), watch.longestPause(began).Round(time.Millisecond))
	return werr
}

const (
	metricDeleted    = "pressure_janitor_pods_deleted_total"
	metricNotApplied = "pressure_janitor_delete_not_applied_total"
	metricErrors     = "pressure_janitor_errors_total"
)

// answers renders a replica's DELETE outcomes from its metrics.
func answers(s map[string]float64) string {
	return fmt.Sprintf("%.0f deleted, %.0f 404, %.0f 409, %.0f delete errors", sum(s, metricDeleted),
		sum(s, metricNotApplied, `result="not_found"`), sum(s, metricNotApplied, `result="conflict"`), sum(s, metricErrors, `operation="delete"`))
}

// waitDeleted waits until n deletions were seen since since.
func (d *deleteWatch) waitDeleted(ctx context.Context, since time.Time, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for d.countSince(since, time.Now()) < n {
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %d of %d deletions", timeout, d.countSince(since, time.Now()), n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// countSince counts the deletions seen in [from, to).
func (d *deleteWatch) countSince(from, to time.Time) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, t := range d.deleted {
		if !t.Before(from) && t.Before(to) {
			n++
		}
	}
	return n
}

// longestPause is the longest time between two consecutive deletions seen since since.
func (d *deleteWatch) longestPause(since time.Time) time.Duration {
	d.mu.Lock()
	var ts []time.Time
	for _, t := range d.deleted {
		if !t.Before(since) {
			ts = append(ts, t)
		}
	}
	d.mu.Unlock()
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	var longest time.Duration
	for i := 1; i < len(ts); i++ {
		longest = max(longest, ts[i].Sub(ts[i-1]))
	}
	return longest
}
