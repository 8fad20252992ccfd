package janitor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/kube-pressure/pressure/internal/owner"
)

// DefaultEventWindow is how long the deletions of one owner are collected into one Event.
const DefaultEventWindow = time.Minute

// ControllerOptions configure a Controller. Client, Clock, Metrics and Logger are required.
type ControllerOptions struct {
	Client          kubernetes.Interface
	Policy          Policy
	Clock           clock.WithTicker
	Metrics         *Metrics
	Logger          *slog.Logger
	DeletionsPerSec float64
	Burst           int
	Workers         int
	DryRun          bool
	EventWindow     time.Duration // 0: DefaultEventWindow
}

// Controller is the shell around Select: informer → work queue → decision → delete → evidence.
//
// Work items are strings: "<ns>/<name>" (the cache key, which shares the cached pod's memory)
// decides one pod, "/g/<ns>/<owner UID>" decides a group (the pods of one controller owner when
// keep-per-owner applies), and "/d/<ns>/<name>/<uid>/<rv>" deletes exactly that version of a pod.
// Decisions enqueue deletions at once and bring themselves back at the next TTL expiry (wakeups).
type Controller struct {
	opts     ControllerOptions
	listed   Policy // what the API server filters for us (namespaces, label selector)
	limiter  *rate.Limiter
	owners   *owner.Resolver
	queue    workqueue.TypedRateLimitingInterface[string]
	indexer  cache.Indexer // set once by Run under mu: census reads it from the metrics registry's goroutine
	evidence *aggregator
	wakeups  *wakeups
	synced   atomic.Bool

	mu        sync.Mutex
	handled   map[string]struct{}  // UIDs being deleted or deleted (or reported in dry-run), still in the cache
	firstSeen map[string]time.Time // UIDs first seen terminal without any eviction time
}

// NewController checks opts and builds a Controller; Run starts it.
func NewController(opts ControllerOptions) (*Controller, error) {
	if opts.Client == nil || opts.Clock == nil || opts.Metrics == nil || opts.Logger == nil {
		return nil, errors.New("janitor: controller needs Client, Clock, Metrics and Logger")
	}
	if opts.Workers < 1 || opts.Burst < 1 || opts.DeletionsPerSec <= 0 {
		return nil, fmt.Errorf("janitor: workers %d, burst %d and deletions per second %v must be positive",
			opts.Workers, opts.Burst, opts.DeletionsPerSec)
	}
	if opts.EventWindow <= 0 {
		opts.EventWindow = DefaultEventWindow
	}
	c := &Controller{
		opts:      opts,
		limiter:   rate.NewLimiter(rate.Limit(opts.DeletionsPerSec), opts.Burst),
		owners:    &owner.Resolver{Client: opts.Client},
		handled:   map[string]struct{}{},
		firstSeen: map[string]time.Time{},
	}
	// The label selector is applied by the API server (labels are not cached), so decisions run
	// with none.
	c.listed = opts.Policy
	c.opts.Policy.Selector = nil
	c.evidence = newAggregator(opts.Client, opts.Clock, opts.Logger, opts.Metrics, opts.EventWindow, opts.DryRun)
	return c, nil
}

// Synced reports whether the pod cache has synced (readiness).
func (c *Controller) Synced() bool { return c.synced.Load() }

// listOptions restricts the watch to pods that can be deleted: terminal phases (only Failed when
// Succeeded pods are not selected), one namespace when only one is selected, never an excluded
// namespace, and the label selector.
func (c *Controller) listOptions() (namespace string, tweak func(*metav1.ListOptions)) {
	p := c.listed
	sels := []fields.Selector{fields.OneTermEqualSelector("status.phase", string(v1.PodFailed))}
	if p.DeleteSucceeded {
		sels = []fields.Selector{
			fields.OneTermNotEqualSelector("status.phase", string(v1.PodPending)),
			fields.OneTermNotEqualSelector("status.phase", string(v1.PodRunning)),
		}
	}
	for _, ns := range p.ExcludeNamespaces {
		sels = append(sels, fields.OneTermNotEqualSelector("metadata.namespace", ns))
	}
	if len(p.Namespaces) == 1 {
		namespace = p.Namespaces[0]
	}
	fs := fields.AndSelectors(sels...).String()
	var ls string
	if p.Selector != nil && !p.Selector.Empty() {
		ls = p.Selector.String()
	}
	return namespace, func(o *metav1.ListOptions) { o.FieldSelector, o.LabelSelector = fs, ls }
}

// Run watches the deletable pods until ctx is done. It returns nil on cancellation.
func (c *Controller) Run(ctx context.Context) error {
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](500*time.Millisecond, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Clock: c.opts.Clock})
	defer c.queue.ShutDown()
	c.wakeups = newWakeups(c.opts.Clock, c.queue.Add)
	ns, tweak := c.listOptions()
	factory := informers.NewSharedInformerFactoryWithOptions(c.opts.Client, 0,
		informers.WithNamespace(ns), informers.WithTweakListOptions(tweak), informers.WithTransform(toCached))
	inf := factory.Core().V1().Pods().Informer()
	if c.opts.Policy.KeepPerOwner > 0 { // only groups read the index (about 50 bytes a pod)
		if err := inf.AddIndexers(cache.Indexers{ownerIndex: ownerIndexFunc}); err != nil {
			return fmt.Errorf("janitor: add owner index: %w", err)
		}
	}
	c.mu.Lock()
	c.indexer = inf.GetIndexer()
	c.mu.Unlock()
	if _, err := inf.AddEventHandler(c.handlers()); err != nil {
		return fmt.Errorf("janitor: add pod handler: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil // cancelled before the cache synced
	}
	c.synced.Store(true)
	defer c.synced.Store(false)
	var wg sync.WaitGroup
	wg.Go(func() { c.evidence.run(ctx) })
	wg.Go(func() { c.wakeups.run(ctx) })
	for range c.opts.Workers {
		wg.Go(func() {
			for c.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	return nil
}

func (c *Controller) handlers() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(obj) },
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: func(obj any) {
			p, ok := cachedFrom(obj)
			if !ok {
				return
			}
			c.forget(p.uid())
			if info := p.info(); c.grouped(&info) { // a kept pod may have gone: the next newest is kept now
				c.queue.Add(groupKey(&info))
			}
		},
	}
}

func (c *Controller) enqueue(obj any) {
	p, ok := cachedFrom(obj)
	if !ok {
		return
	}
	info := p.info()
	if c.grouped(&info) {
		c.queue.Add(groupKey(&info))
		return
	}
	c.queue.Add(p.key())
}

// grouped: keep-per-owner decides among the pods of the owner, so they are decided together.
func (c *Controller) grouped(p *PodInfo) bool {
	return c.opts.Policy.KeepPerOwner > 0 && p.Owner.UID != ""
}

func (c *Controller) forget(uid string) {
	c.mu.Lock()
	delete(c.handled, uid)
	delete(c.firstSeen, uid)
	c.mu.Unlock()
}

func (c *Controller) isHandled(uid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.handled[uid]
	return ok
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	c.opts.Metrics.passes.Inc()
	var err error
	switch {
	case strings.HasPrefix(key, deletePrefix):
		err = c.deleteItem(ctx, key)
	default:
		err = c.decide(ctx, key)
	}
	switch {
	case err != nil && ctx.Err() == nil:
		c.queue.AddRateLimited(key)
	default:
		c.queue.Forget(key)
	}
	return true
}

// census decides every cached pod now, for the skipped and pending gauges.
func (c *Controller) census() Census {
	cs := Census{Skipped: map[SkipReason]int{}, Pending: map[string]int{}}
	c.mu.Lock()
	idx := c.indexer // a Gather may come before Run set it, from another goroutine
	c.mu.Unlock()
	if idx == nil {
		return cs
	}
	now := c.opts.Clock.Now()
	count := func(actions []Action) {
		for i := range actions {
			switch actions[i].Verb {
			case VerbSkip:
				cs.Skipped[actions[i].Skip]++
			case VerbWait:
				cs.Pending[actions[i].Pod.Namespace]++
			}
		}
	}
	seen := map[string]bool{}
	for _, key := range idx.ListKeys() {
		obj, ok, err := idx.GetByKey(key)
		if err != nil || !ok {
			continue
		}
		cp, ok := obj.(*cachedPod)
		if !ok {
			continue
		}
		info := cp.info()
		item := cp.key()
		if c.grouped(&info) {
			if item = groupKey(&info); seen[item] {
				continue
			}
			seen[item] = true
		}
		if pods, err := c.members(item); err == nil {
			count(Select(pods, now, c.opts.Policy))
		}
	}
	return cs
}
