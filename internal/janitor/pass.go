package janitor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

type passResult struct {
	next    time.Time // earliest TTL expiry among waiting pods
	hasNext bool
	more    bool // deletions were cut at MaxPerPass
	failed  bool // an API call failed: retry with backoff
}

type outcome int

const (
	outDeleted outcome = iota
	outGone
	outChanged
	outFailed
)

// pass runs Select on the cached pods and carries out its decisions.
func (c *Controller) pass(ctx context.Context) passResult {
	pods, err := c.lister.List(labels.Everything())
	if err != nil {
		c.opts.Logger.Error("list cached pods", "err", err)
		return passResult{failed: true}
	}
	now := c.opts.Clock.Now()
	actions := Select(c.podInfos(pods), now, c.opts.Policy)
	var res passResult
	res.next, res.hasNext = NextDue(actions)
	res.failed = !c.markFirstSeen(ctx, actions)
	deletes := deleteActions(actions)
	c.opts.Logger.Debug("pass", "pods", len(actions), "delete", len(deletes), "nextDue", res.next)
	if len(deletes) > c.opts.MaxPerPass {
		deletes, res.more = deletes[:c.opts.MaxPerPass], true
	}
	counts := c.deleteAll(ctx, deletes)
	res.failed = res.failed || counts[outFailed] > 0
	c.opts.Metrics.observePass(actions, counts[outChanged])
	return res
}

func (c *Controller) podInfos(pods []*v1.Pod) []PodInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	infos := make([]PodInfo, 0, len(pods))
	for _, pod := range pods {
		uid := string(pod.UID)
		if _, done := c.handled[uid]; done {
			continue
		}
		info := FromPod(pod)
		if t, ok := c.firstSeen[uid]; ok && info.Source == FromNone {
			info.EvictedAt, info.Source = t, FromFirstSeen
		}
		infos = append(infos, info)
	}
	return infos
}

func deleteActions(actions []Action) []Action {
	n := 0
	for n < len(actions) && actions[n].Verb == VerbDelete {
		n++
	}
	return actions[:n]
}

// markFirstSeen remembers the first-seen time of pods that have no other eviction time, in
// memory and (unless dry-run) in AnnotationTerminalSince, so a restart keeps the TTL running.
func (c *Controller) markFirstSeen(ctx context.Context, actions []Action) bool {
	ok := true
	for i := range actions {
		a := &actions[i]
		if !a.RecordFirstSeen || a.Verb == VerbDelete {
			continue
		}
		c.mu.Lock()
		c.firstSeen[a.Pod.UID] = a.EvictedAt
		c.mu.Unlock()
		if c.opts.DryRun {
			continue
		}
		if err := c.annotateFirstSeen(ctx, &a.Pod, a.EvictedAt); err != nil {
			c.opts.Metrics.observeError(a.Pod.Namespace, OpMark)
			c.opts.Logger.Error("record first-seen time", "pod", a.Pod.Key(), "err", err)
			ok = false
		}
	}
	return ok
}

func (c *Controller) annotateFirstSeen(ctx context.Context, p *PodInfo, t time.Time) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, AnnotationTerminalSince, t.UTC().Format(time.RFC3339))
	_, err := c.opts.Client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// deleteAll runs the deletions on Workers goroutines through the rate limiter and counts outcomes.
func (c *Controller) deleteAll(ctx context.Context, deletes []Action) map[outcome]int {
	counts := map[outcome]int{}
	var mu sync.Mutex
	work := make(chan *Action)
	var wg sync.WaitGroup
	for range min(c.opts.Workers, len(deletes)) {
		wg.Go(func() {
			for a := range work {
				o := c.deleteOne(ctx, a)
				mu.Lock()
				counts[o]++
				mu.Unlock()
			}
		})
	}
	for i := range deletes {
		if c.waitToken(ctx) != nil {
			break
		}
		work <- &deletes[i]
	}
	close(work)
	wg.Wait()
	return counts
}

// waitToken takes one deletion token, sleeping on the injected clock.
func (c *Controller) waitToken(ctx context.Context) error {
	now := c.opts.Clock.Now()
	r := c.limiter.ReserveN(now, 1)
	d := r.DelayFrom(now)
	if d <= 0 {
		return nil
	}
	t := c.opts.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		r.CancelAt(now)
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// deleteOne writes the evidence, then deletes the selected version of the pod.
func (c *Controller) deleteOne(ctx context.Context, a *Action) outcome {
	p := &a.Pod
	log := c.opts.Logger
	owner, err := c.owners.resolve(ctx, p.Namespace, p.Owner)
	if err != nil {
		c.opts.Metrics.observeError(p.Namespace, OpOwner)
		log.Warn("resolve owner; the evidence names the nearest owner", "pod", p.Key(), "err", err)
	}
	rec := NewRecord(a, owner)
	if err := c.writeEvidence(ctx, rec, owner, p.Namespace); err != nil {
		c.opts.Metrics.observeError(p.Namespace, OpEvidence)
		log.Error("write evidence; pod not deleted", "pod", p.Key(), "err", err)
		return outFailed
	}
	msg := "deleting terminal pod"
	if c.opts.DryRun {
		msg = "dry-run: would delete terminal pod"
	}
	log.Info(msg, rec.LogAttrs()...)
	deleted, err := DeletePod(ctx, c.opts.Client, PodRef{p.Namespace, p.Name, p.UID, p.ResourceVersion}, c.opts.DryRun)
	switch {
	case errors.Is(err, ErrChanged):
		c.retractEvidence(ctx, p)
		log.Info("pod changed since selection; not deleted", "pod", p.Key(), "uid", p.UID, "resourceVersion", p.ResourceVersion)
		return outChanged
	case err != nil:
		c.opts.Metrics.observeError(p.Namespace, OpDelete)
		log.Error("delete pod", "pod", p.Key(), "err", err)
		return outFailed
	}
	c.mu.Lock()
	c.handled[p.UID] = struct{}{}
	c.mu.Unlock()
	if !deleted {
		return outGone
	}
	c.opts.Metrics.observeDeleted(p, c.opts.DryRun)
	return outDeleted
}

func (c *Controller) writeEvidence(ctx context.Context, rec Record, owner OwnerRef, namespace string) error {
	if c.opts.DryRun {
		return nil
	}
	ev, err := NewEvent(rec, owner, namespace, c.opts.Clock.Now())
	if err != nil {
		return err
	}
	_, err = c.opts.Client.CoreV1().Events(namespace).Create(ctx, ev, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil // written by an earlier attempt or another leader
	}
	return err
}

// retractEvidence removes the Event of a pod that was not deleted after all (best effort).
func (c *Controller) retractEvidence(ctx context.Context, p *PodInfo) {
	if c.opts.DryRun {
		return
	}
	err := c.opts.Client.CoreV1().Events(p.Namespace).Delete(ctx, EvidenceEventName(p.UID), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		c.opts.Logger.Warn("retract evidence event", "pod", p.Key(), "err", err)
	}
}
