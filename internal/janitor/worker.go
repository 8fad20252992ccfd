package janitor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unique"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/owner"
	"github.com/kube-pressure/pressure/internal/policy"
)

// Work item prefixes; a pod's item is its cache key, and namespaces never begin with "/".
const (
	groupPrefix  = "/g/"
	deletePrefix = "/d/"
)

// groupKey is interned: many pods of an owner wait for the same item.
func groupKey(p *PodInfo) string {
	return unique.Make(groupPrefix + p.Namespace + "/" + p.Owner.UID).Value()
}

func deleteKey(p *PodInfo) string {
	return deletePrefix + p.Namespace + "/" + p.Name + "/" + p.UID + "/" + p.ResourceVersion
}

// members returns the cached pods a decision key covers, without the ones already handled.
func (c *Controller) members(key string) ([]PodInfo, error) {
	var objs []any
	if ownerKey, ok := strings.CutPrefix(key, groupPrefix); ok {
		_, uid, ok := strings.Cut(ownerKey, "/")
		if !ok {
			return nil, fmt.Errorf("janitor: bad work item %q", key)
		}
		var err error
		if objs, err = c.indexer.ByIndex(ownerIndex, uid); err != nil {
			return nil, err
		}
	} else {
		obj, ok, err := c.indexer.GetByKey(key)
		if err != nil {
			return nil, err
		}
		if ok {
			objs = []any{obj}
		}
	}
	infos := make([]PodInfo, 0, len(objs))
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, obj := range objs {
		cp, ok := obj.(*cachedPod)
		if !ok {
			continue
		}
		if _, done := c.handled[cp.uid()]; done {
			continue
		}
		info := cp.info()
		if t, ok := c.firstSeen[info.UID]; ok && info.Source == FromNone {
			info.EvictedAt, info.Source = t, FromFirstSeen
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// decide runs Select on a pod or an owner's pods: due pods become delete items, waiting ones bring
// the decision back at their TTL expiry.
func (c *Controller) decide(ctx context.Context, key string) error {
	pods, err := c.members(key)
	if err != nil {
		return err
	}
	now := c.opts.Clock.Now()
	actions := Select(pods, now, c.opts.Policy)
	failed := !c.markFirstSeen(ctx, actions)
	for i := range actions {
		if actions[i].Verb == VerbDelete {
			c.queue.Add(deleteKey(&actions[i].Pod))
		}
	}
	if next, ok := NextDue(actions); ok {
		c.wakeups.at(key, next)
	}
	if failed {
		return errors.New("janitor: record first-seen time")
	}
	return nil
}

// deleteItem deletes the version of the pod a decision selected, if it is still the cached one.
func (c *Controller) deleteItem(ctx context.Context, key string) error {
	parts := strings.Split(strings.TrimPrefix(key, deletePrefix), "/")
	if len(parts) != 4 {
		return nil
	}
	obj, ok, err := c.indexer.GetByKey(parts[0] + "/" + parts[1])
	if err != nil || !ok {
		return err // gone: nothing to do
	}
	cp, ok := obj.(*cachedPod)
	if !ok || cp.uid() != parts[2] || cp.resourceVersion() != parts[3] || c.isHandled(parts[2]) {
		return nil // a newer version has its own decision
	}
	p := cp.podInfo()
	if t, ok := c.firstSeenOf(p.UID); ok && p.Source == FromNone {
		p.EvictedAt, p.Source = t, FromFirstSeen
	}
	a := classify(p, c.opts.Clock.Now(), c.opts.Policy)
	if a.Verb != VerbDelete {
		return nil
	}
	if err := c.waitToken(ctx); err != nil {
		return err
	}
	return c.deleteOne(ctx, &a)
}

func (c *Controller) firstSeenOf(uid string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.firstSeen[uid]
	return t, ok
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

// deleteOne logs the evidence, deletes the selected version of the pod and hands the record to
// the Event aggregator. It returns an error only for a failure worth a retry.
func (c *Controller) deleteOne(ctx context.Context, a *Action) error {
	p := &a.Pod
	if !c.claim(p.UID) {
		return nil // another worker deletes this pod, or has deleted it
	}
	log := c.opts.Logger
	workload, err := resolveOwner(ctx, c.owners, p.Namespace, p.Owner)
	if err != nil {
		c.opts.Metrics.observeError(p.Namespace, OpOwner)
		log.Warn("resolve owner; the evidence names the nearest owner", "pod", p.Key(), "err", err)
	}
	rec := NewRecord(a, workload)
	msg := "deleting terminal pod"
	if c.opts.DryRun {
		msg = "dry-run: would delete terminal pod"
	}
	attrs := logAttrs(rec)
	if p.Terminating {
		attrs = append(attrs, slog.Bool("terminating", true)) // finishing a deletion someone began
	}
	log.Info(msg, attrs...)
	deleted, err := DeletePod(ctx, c.opts.Client, PodRef{p.Namespace, p.Name, p.UID, p.ResourceVersion}, c.opts.DryRun)
	switch {
	case errors.Is(err, ErrChanged):
		c.release(p.UID)
		c.opts.Metrics.observeNotApplied(ResultConflict)
		log.Info("pod changed since selection; not deleted", "pod", p.Key(), "uid", p.UID, "resourceVersion", p.ResourceVersion)
		return nil // the change brings its own decision
	case err != nil:
		c.release(p.UID)
		c.opts.Metrics.observeError(p.Namespace, OpDelete)
		log.Error("delete pod", "pod", p.Key(), "err", err)
		return err
	}
	if !deleted {
		c.opts.Metrics.observeNotApplied(ResultNotFound)
		return nil
	}
	c.opts.Metrics.observeDeleted(p, c.opts.DryRun)
	c.evidence.add(rec, workload, p) // in a dry run, its report (EventReasonDryRun)
	return nil
}

// claim marks a pod handled before its DELETE is sent, and reports whether it was not already. A
// pod's DELETE is two writes in the API server (deletionTimestamp, then removal): the first one's
// watch event brings a new version, terminating without finalizers, which Select deletes, and its
// work item may reach another worker while the first DELETE is in flight. The claim keeps that
// second DELETE from being sent.
func (c *Controller) claim(uid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.handled[uid]; ok {
		return false
	}
	c.handled[uid] = struct{}{}
	return true
}

// release undoes claim after a DELETE that was not applied, so a later version can be deleted.
func (c *Controller) release(uid string) {
	c.mu.Lock()
	delete(c.handled, uid)
	c.mu.Unlock()
}

// resolveOwner returns the workload of a pod's controller reference (owner.Resolver: a ReplicaSet
// owned by a Deployment resolves to the Deployment). On error it returns ref itself with the error, so
// the evidence still names the nearest owner.
func resolveOwner(ctx context.Context, r *owner.Resolver, namespace string, ref OwnerRef) (OwnerRef, error) {
	got, err := r.Resolve(ctx, policy.Workload{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: namespace, Name: ref.Name,
		UID: ref.UID})
	return OwnerRef{APIVersion: got.APIVersion, Kind: got.Kind, Name: got.Name, UID: got.UID}, err
}
