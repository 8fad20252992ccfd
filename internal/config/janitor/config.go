package janitor

import (
	"time"
)

// Config is the validated, typed configuration the janitor runs with.
type Config struct {
	Kubeconfig        string
	TTL               time.Duration
	KeepPerOwner      int
	Reasons           []string
	DeleteSucceeded   bool
	Namespaces        []string
	ExcludeNamespaces []string
	LabelSelector     string
	DeletionsPerSec   float64
	Burst             int
	Workers           int
	DryRun            bool
	LeaderElection    LeaderElectionConfig
	MetricsAddr       string // "0" or "" disables the server
	HealthProbeAddr   string // "0" or "" disables the server
	AvoidanceWebhook  AvoidanceWebhookConfig
}

// AvoidanceWebhookConfig is the typed form of AvoidanceWebhook.
type AvoidanceWebhookConfig struct {
	Addr              string // "0" or "" disables the webhook
	CertFile, KeyFile string
	Namespace         string
}

// Enabled reports whether the webhook is served.
func (c AvoidanceWebhookConfig) Enabled() bool { return c.Addr != "" && c.Addr != "0" }

// LeaderElectionConfig is the typed form of LeaderElection.
type LeaderElectionConfig struct {
	Enabled        bool
	LeaseName      string
	LeaseNamespace string
	LeaseDuration  time.Duration
	RenewDeadline  time.Duration
	RetryPeriod    time.Duration
}

// Convert turns a defaulted, validated file into a Config. Call SetDefaults and Validate first;
// Convert dereferences every optional field.
func Convert(c *JanitorConfiguration) Config {
	le := c.LeaderElection
	return Config{
		Kubeconfig:        *c.Kubeconfig,
		TTL:               c.TTL.Duration,
		KeepPerOwner:      int(*c.KeepPerOwner),
		Reasons:           append([]string(nil), c.Reasons...),
		DeleteSucceeded:   *c.DeleteSucceeded,
		Namespaces:        append([]string(nil), c.Namespaces...),
		ExcludeNamespaces: append([]string(nil), c.ExcludeNamespaces...),
		LabelSelector:     *c.LabelSelector,
		DeletionsPerSec:   *c.RateLimit.DeletionsPerSecond,
		Burst:             int(*c.RateLimit.Burst),
		Workers:           int(*c.Workers),
		DryRun:            *c.DryRun,
		LeaderElection: LeaderElectionConfig{
			Enabled:        *le.LeaderElect,
			LeaseName:      *le.LeaseName,
			LeaseNamespace: *le.LeaseNamespace,
			LeaseDuration:  le.LeaseDuration.Duration,
			RenewDeadline:  le.RenewDeadline.Duration,
			RetryPeriod:    le.RetryPeriod.Duration,
		},
		MetricsAddr:     *c.MetricsBindAddress,
		HealthProbeAddr: *c.HealthProbeBindAddress,
		AvoidanceWebhook: AvoidanceWebhookConfig{Addr: *c.AvoidanceWebhook.BindAddress, CertFile: *c.AvoidanceWebhook.CertFile,
			KeyFile: *c.AvoidanceWebhook.KeyFile, Namespace: *c.AvoidanceWebhook.Namespace},
	}
}
