package uninstall

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
)

// Cleaner stops the agent DaemonSet and removes the agents' taint from every node.
type Cleaner struct {
	Client kubernetes.Interface
	// Namespace and DaemonSet name the agent DaemonSet.
	Namespace, DaemonSet string
	// TaintKey is the agents' NoSchedule taint (the configuration's loopBreaker.taintKey).
	TaintKey string
	// StopTimeout bounds the wait for the agent pods to stop; after it the taints are removed anyway.
	StopTimeout time.Duration
	// Poll is the interval of the wait.
	Poll time.Duration
	Log  *slog.Logger
}

// Report is what Run did.
type Report struct {
	// Stopped: the DaemonSet and its pods are gone (false: StopTimeout passed first).
	Stopped bool
	// StopTook is how long the wait for the agents took.
	StopTook time.Duration
	// Untainted lists the nodes whose taint Run removed, sorted: those whose agent did not.
	Untainted []string
}

// Run deletes the DaemonSet in the foreground (the API server keeps it until the garbage collector
// has deleted its pods, each of which removes its own taint when it stops), waits up to StopTimeout
// for it to be gone, then removes the taint from every node that still has it. A DaemonSet that is
// already gone is no error. Only a failed API call is: the nodes it could not clear are named.
func (c Cleaner) Run(ctx context.Context) (Report, error) {
	var r Report
	start := time.Now()
	stopped, err := c.stopAgents(ctx)
	if err != nil {
		return r, err
	}
	r.Stopped, r.StopTook = stopped, time.Since(start)
	if stopped {
		c.Log.Info("agents stopped", "daemonset", c.Namespace+"/"+c.DaemonSet, "took", r.StopTook.Round(time.Millisecond))
	} else {
		c.Log.Warn("agents still stopping, removing the taints anyway (an agent that is still running may put its taint back "+
			"and not remove it)", "daemonset", c.Namespace+"/"+c.DaemonSet, "waited", r.StopTook.Round(time.Millisecond))
	}
	r.Untainted, err = c.untaint(ctx)
	return r, err
}

// stopAgents deletes the DaemonSet with foreground propagation and reports whether it was gone
// within StopTimeout.
func (c Cleaner) stopAgents(ctx context.Context) (bool, error) {
	ds := c.Client.AppsV1().DaemonSets(c.Namespace)
	fg := metav1.DeletePropagationForeground
	err := ds.Delete(ctx, c.DaemonSet, metav1.DeleteOptions{PropagationPolicy: &fg})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("delete daemonset %s/%s: %w", c.Namespace, c.DaemonSet, err)
	}
	wait, cancel := context.WithTimeout(ctx, c.StopTimeout)
	defer cancel()
	tick := time.NewTicker(c.Poll)
	defer tick.Stop()
	for {
		_, err := ds.Get(wait, c.DaemonSet, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case wait.Err() != nil && ctx.Err() == nil:
			return false, nil
		case ctx.Err() != nil:
			return false, fmt.Errorf("wait for daemonset %s/%s to go: %w", c.Namespace, c.DaemonSet, ctx.Err())
		case err != nil:
			c.Log.Warn("get daemonset", "daemonset", c.Namespace+"/"+c.DaemonSet, "err", err)
		}
		select {
		case <-tick.C:
		case <-wait.Done():
		}
	}
}

// untaint removes the taint from every node that has it and returns their names, sorted.
func (c Cleaner) untaint(ctx context.Context) ([]string, error) {
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	var done []string
	var errs []error
	for _, n := range nodes.Items {
		if !hasTaint(n.Spec.Taints, c.TaintKey) {
			continue
		}
		t := loopbreaker.Tainter{Client: c.Client, Node: n.Name, Key: c.TaintKey}
		changed, err := t.Remove(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if changed {
			c.Log.Info("taint removed", "node", n.Name, "taint", c.TaintKey)
			done = append(done, n.Name)
		}
	}
	sort.Strings(done)
	return done, errors.Join(errs...)
}

func hasTaint(ts []corev1.Taint, key string) bool {
	_, had := loopbreaker.WithoutTaint(ts, key)
	return had
}
