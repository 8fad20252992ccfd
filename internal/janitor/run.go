package janitor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	config "github.com/kube-pressure/pressure/internal/config/janitor"
	"github.com/kube-pressure/pressure/internal/daemon"
)

// Options are the dependencies Run would otherwise build itself; tests inject them.
type Options struct {
	RESTConfig *rest.Config         // nil: from cfg.Kubeconfig (or in-cluster)
	Clock      clock.WithTicker     // nil: the real clock
	Registry   *prometheus.Registry // nil: a new registry with the Go and process collectors
	Logger     *slog.Logger         // nil: JSON on stderr
	Identity   string               // leader election identity; "": hostname and a random suffix
	Profiling  bool                 // serve net/http/pprof under /debug/pprof/ on the metrics address
	// OnController, if set, is called with each Controller this replica starts (one per term as
	// leader); tests use it to wait for readiness.
	OnController func(*Controller)
	// OnWebhook, if set, is called with the avoidance webhook's bound address once it serves.
	OnWebhook func(addr string)
}

// RunWithOptions runs the janitor until ctx is done, with the dependencies opts injects: servers,
// leader election (if enabled) and the controller. It returns nil after a graceful shutdown, or an
// error (also when the lease is lost).
func RunWithOptions(ctx context.Context, cfg config.Config, opts Options) error {
	opts, err := opts.withDefaults(cfg)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(opts.RESTConfig)
	if err != nil {
		return fmt.Errorf("janitor: client: %w", err)
	}
	metrics, err := NewMetrics(opts.Registry)
	if err != nil {
		return err
	}
	policy, err := PolicyFrom(cfg)
	if err != nil {
		return err
	}
	r := &runner{cfg: cfg, opts: opts, client: client, metrics: metrics, policy: policy}
	return r.run(ctx)
}

// PolicyFrom builds the selection Policy of a configuration.
func PolicyFrom(cfg config.Config) (Policy, error) {
	sel, err := labels.Parse(cfg.LabelSelector)
	if err != nil {
		return Policy{}, fmt.Errorf("janitor: label selector %q: %w", cfg.LabelSelector, err)
	}
	return Policy{
		TTL: cfg.TTL, KeepPerOwner: cfg.KeepPerOwner, Reasons: cfg.Reasons, DeleteSucceeded: cfg.DeleteSucceeded,
		Namespaces: cfg.Namespaces, ExcludeNamespaces: cfg.ExcludeNamespaces, Selector: sel,
	}, nil
}

func (o Options) withDefaults(cfg config.Config) (Options, error) {
	if o.RESTConfig == nil {
		rc, err := daemon.RESTConfig(cfg.Kubeconfig)
		if err != nil {
			return o, fmt.Errorf("janitor: %w", err)
		}
		o.RESTConfig = rc
	}
	// One call (the delete) per deletion, plus owner lookups, first-seen patches, one Event per
	// owner and minute and lease renewals: the deletion rate and 20/s of headroom. Protobuf for the
	// informer's list and watch.
	o.RESTConfig = daemon.Client{QPS: float32(cfg.DeletionsPerSec + 20), Burst: cfg.Burst + 40,
		UserAgent: Component, Protobuf: true}.Apply(o.RESTConfig)
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Registry == nil {
		o.Registry = daemon.NewRegistry()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	if o.Identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return o, fmt.Errorf("janitor: leader election identity: %w", err)
		}
		o.Identity = host + "_" + randomSuffix()
	}
	return o, nil
}

// ErrLeaseLost is returned by Run when this replica stops being the leader without being asked to.
var ErrLeaseLost = errors.New("janitor: leader lease lost")
