package janitor

import (
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/config/cmdline"
)

// Overrides are the command-line flags that override the file. The caller owns the FlagSet (flags
// live in package main); AddFlags only registers on it.
type Overrides struct {
	cmdline.Flags
	TTL               time.Duration
	KeepPerOwner      int32
	Namespaces        []string
	ExcludeNamespaces []string
	LabelSelector     string
	LeaderElect       bool
}

// AddFlags registers the common daemon flags and the janitor's own on fs.
func (o *Overrides) AddFlags(fs *pflag.FlagSet) {
	o.Flags.AddFlags(fs, cmdline.Usage{
		Config: "path of a " + Kind + " file (" + APIVersion + ")",
		DryRun: "log and count what would be deleted; change nothing",
	})
	fs.DurationVar(&o.TTL, "ttl", DefaultTTL, "delete a pod this long after its eviction time (0s: as soon as seen)")
	fs.Int32Var(&o.KeepPerOwner, "keep-per-owner", DefaultKeepPerOwner, "keep the newest N matching pods of each owner")
	fs.StringSliceVar(&o.Namespaces, "namespace", nil, "only these namespaces (repeatable; default all)")
	fs.StringSliceVar(&o.ExcludeNamespaces, "exclude-namespace", nil, "never these namespaces (repeatable)")
	fs.StringVar(&o.LabelSelector, "label-selector", "", "only pods matching this label selector")
	fs.BoolVar(&o.LeaderElect, "leader-elect", true, "elect a leader through a Lease before deleting")
}

// Apply copies every flag the user set (fs.Changed) into c and returns field path → flag name for
// Origin.Flags.
func (o *Overrides) Apply(fs *pflag.FlagSet, c *JanitorConfiguration) map[string]string {
	set := map[string]string{}
	apply := func(flag, field string, fn func()) {
		if fs.Changed(flag) {
			fn()
			set[field] = flag
		}
	}
	apply("kubeconfig", "kubeconfig", func() { c.Kubeconfig = &o.Kubeconfig })
	apply("ttl", "ttl", func() { c.TTL = &metav1.Duration{Duration: o.TTL} })
	apply("keep-per-owner", "keepPerOwner", func() { c.KeepPerOwner = &o.KeepPerOwner })
	apply("namespace", "namespaces", func() { c.Namespaces = o.Namespaces })
	apply("exclude-namespace", "excludeNamespaces", func() { c.ExcludeNamespaces = o.ExcludeNamespaces })
	apply("label-selector", "labelSelector", func() { c.LabelSelector = &o.LabelSelector })
	apply("leader-elect", "leaderElection.leaderElect", func() {
		if c.LeaderElection == nil {
			c.LeaderElection = &LeaderElection{}
		}
		c.LeaderElection.LeaderElect = &o.LeaderElect
	})
	apply("dry-run", "dryRun", func() { c.DryRun = &o.DryRun })
	apply("metrics-bind-address", "metricsBindAddress", func() { c.MetricsBindAddress = &o.MetricsBindAddress })
	apply("health-probe-bind-address", "healthProbeBindAddress", func() { c.HealthProbeBindAddress = &o.HealthProbeBindAddress })
	return set
}

// Resolve runs the whole pipeline for a parsed FlagSet: load --config (if any), apply the flags,
// default, validate and convert.
func (o *Overrides) Resolve(fs *pflag.FlagSet) (Config, error) {
	c := &JanitorConfiguration{}
	if o.ConfigFile != "" {
		var err error
		if c, err = LoadFile(o.ConfigFile); err != nil {
			return Config{}, err
		}
	}
	origin := Origin{File: o.ConfigFile, Flags: o.Apply(fs, c)}
	SetDefaults(c)
	if err := Validate(c, origin); err != nil {
		return Config{}, err
	}
	return Convert(c), nil
}
