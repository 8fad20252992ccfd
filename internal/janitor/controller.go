package janitor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// DefaultMaxPerPass bounds the deletions of one pass, so a large backlog is worked on a fresh view.
const DefaultMaxPerPass = 500

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
	MaxPerPass      int // 0: DefaultMaxPerPass
}

// Controller is the shell around Select: informer → Select → evidence → delete.
type Controller struct {
	opts    ControllerOptions
	limiter *rate.Limiter
	owners  *ownerResolver
	trigger chan struct{}
	lister  corelisters.PodLister
	synced  atomic.Bool

	mu        sync.Mutex
	handled   map[string]struct{}  // UIDs deleted (or reported in dry-run) still in the cache
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
	if opts.MaxPerPass <= 0 {
		opts.MaxPerPass = DefaultMaxPerPass
	}
	return &Controller{
		opts:      opts,
		limiter:   rate.NewLimiter(rate.Limit(opts.DeletionsPerSec), opts.Burst),
		owners:    newOwnerResolver(opts.Client),
		trigger:   make(chan struct{}, 1),
		handled:   map[string]struct{}{},
		firstSeen: map[string]time.Time{},
	}, nil
}

// Synced reports whether the pod cache has synced (readiness).
func (c *Controller) Synced() bool { return c.synced.Load() }

// Run watches terminal pods until ctx is done. It returns nil on cancellation.
func (c *Controller) Run(ctx context.Context) error {
	factory := informers.NewSharedInformerFactoryWithOptions(c.opts.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			// Only terminal pods are ever deleted; never cache the running ones.
			o.FieldSelector = fields.AndSelectors(
				fields.OneTermNotEqualSelector("status.phase", string(v1.PodPending)),
				fields.OneTermNotEqualSelector("status.phase", string(v1.PodRunning)),
			).String()
		}),
		informers.WithTransform(stripManagedFields))
	podInformer := factory.Core().V1().Pods()
	c.lister = podInformer.Lister()
	if _, err := podInformer.Informer().AddEventHandler(c.handlers()); err != nil {
		return fmt.Errorf("janitor: add pod handler: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), podInformer.Informer().HasSynced) {
		return nil // cancelled before the cache synced
	}
	c.synced.Store(true)
	defer c.synced.Store(false)
	return c.loop(ctx)
}

func (c *Controller) handlers() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.poke() },
		UpdateFunc: func(any, any) { c.poke() },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if pod, ok := obj.(*v1.Pod); ok {
				c.forget(string(pod.UID))
			}
		},
	}
}

func (c *Controller) poke() {
	select {
	case c.trigger <- struct{}{}:
	default:
	}
}

func (c *Controller) forget(uid string) {
	c.mu.Lock()
	delete(c.handled, uid)
	delete(c.firstSeen, uid)
	c.mu.Unlock()
}

// loop runs a pass on every change and at the next TTL expiry; errors back off up to a minute.
func (c *Controller) loop(ctx context.Context) error {
	backoff := time.Duration(0)
	for {
		res := c.pass(ctx)
		if ctx.Err() != nil {
			return nil
		}
		wait := time.Duration(-1)
		if res.hasNext {
			wait = max(res.next.Sub(c.opts.Clock.Now()), 0)
		}
		backoff = nextBackoff(backoff, res.failed)
		if backoff > 0 && (wait < 0 || backoff < wait) {
			wait = backoff
		}
		if res.more {
			wait = 0
		}
		if !c.sleep(ctx, wait) {
			return nil
		}
	}
}

func nextBackoff(cur time.Duration, failed bool) time.Duration {
	switch {
	case !failed:
		return 0
	case cur == 0:
		return time.Second
	}
	return min(2*cur, time.Minute)
}

// sleep waits for a poke, ctx, or d (d < 0: no timer). It returns false when ctx is done.
func (c *Controller) sleep(ctx context.Context, d time.Duration) bool {
	var timerC <-chan time.Time
	if d >= 0 {
		t := c.opts.Clock.NewTimer(d)
		defer t.Stop()
		timerC = t.C()
	}
	select {
	case <-ctx.Done():
		return false
	case <-c.trigger:
	case <-timerC:
	}
	return true
}
