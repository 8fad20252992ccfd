package janitor

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/config/cmdline"
)

// Defaults, documented in docs/janitor.md.
const (
	DefaultTTL                    = 10 * time.Minute
	DefaultKeepPerOwner           = 1
	DefaultDeletionsPerSecond     = 20.0
	DefaultBurst                  = 50
	DefaultWorkers                = 4
	DefaultLeaseName              = "pressure-janitor"
	DefaultLeaseNamespace         = "kube-system"
	DefaultLeaseDuration          = 15 * time.Second
	DefaultRenewDeadline          = 10 * time.Second
	DefaultRetryPeriod            = 2 * time.Second
	DefaultMetricsBindAddress     = cmdline.DefaultMetricsBindAddress
	DefaultHealthProbeBindAddress = cmdline.DefaultHealthProbeBindAddress
)

// DefaultReasons are the status.reason values deleted when reasons is unset: node-pressure
// evictions and kubelet admission rejections both carry reason Evicted.
func DefaultReasons() []string { return []string{"Evicted"} }

// SetDefaults fills every unset field of c.
func SetDefaults(c *JanitorConfiguration) {
	if c.APIVersion == "" {
		c.APIVersion = APIVersion
	}
	if c.Kind == "" {
		c.Kind = Kind
	}
	setDefault(&c.Kubeconfig, "")
	setDefault(&c.TTL, metav1.Duration{Duration: DefaultTTL})
	setDefault(&c.KeepPerOwner, int32(DefaultKeepPerOwner))
	if c.Reasons == nil {
		c.Reasons = DefaultReasons()
	}
	setDefault(&c.DeleteSucceeded, false)
	setDefault(&c.LabelSelector, "")
	setDefault(&c.RateLimit, RateLimit{})
	setDefault(&c.RateLimit.DeletionsPerSecond, DefaultDeletionsPerSecond)
	setDefault(&c.RateLimit.Burst, int32(DefaultBurst))
	setDefault(&c.Workers, int32(DefaultWorkers))
	setDefault(&c.DryRun, false)
	setLeaderElectionDefaults(c)
	setDefault(&c.MetricsBindAddress, DefaultMetricsBindAddress)
	setDefault(&c.HealthProbeBindAddress, DefaultHealthProbeBindAddress)
	setDefault(&c.AvoidanceWebhook, AvoidanceWebhook{})
	aw := c.AvoidanceWebhook
	setDefault(&aw.BindAddress, "0")
	setDefault(&aw.CertFile, "")
	setDefault(&aw.KeyFile, "")
	setDefault(&aw.Namespace, "")
}

func setLeaderElectionDefaults(c *JanitorConfiguration) {
	setDefault(&c.LeaderElection, LeaderElection{})
	le := c.LeaderElection
	setDefault(&le.LeaderElect, true)
	setDefault(&le.LeaseName, DefaultLeaseName)
	setDefault(&le.LeaseNamespace, DefaultLeaseNamespace)
	setDefault(&le.LeaseDuration, metav1.Duration{Duration: DefaultLeaseDuration})
	setDefault(&le.RenewDeadline, metav1.Duration{Duration: DefaultRenewDeadline})
	setDefault(&le.RetryPeriod, metav1.Duration{Duration: DefaultRetryPeriod})
}

func setDefault[T any](p **T, v T) {
	if *p == nil {
		*p = &v
	}
}
