package janitor

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kube-pressure/pressure/internal/config/configfile"
)

// leaderElectionJitter is client-go's leaderelection.JitterFactor: RenewDeadline must exceed
// RetryPeriod times it.
const leaderElectionJitter = 1.2

// Origin says where each field came from, so errors name the file or the flag.
type Origin struct {
	File  string            // the --config path, or "" when no file was given
	Flags map[string]string // field path → flag name, for fields set by flags
}

func (o Origin) of(field string) string {
	if i := strings.IndexByte(field, '['); i >= 0 {
		field = field[:i] // namespaces[2] was set as a whole
	}
	if flag, ok := o.Flags[field]; ok {
		return "flag --" + flag
	}
	if o.File == "" {
		return "defaults"
	}
	return o.File
}

type validator struct{ configfile.Validator }

func (v *validator) check(ok bool, field string, value any, reason string) {
	v.Check(ok, field, value, reason)
}

// Validate checks a defaulted configuration and returns every problem joined (errors.Join of
// *FieldError), or nil.
func Validate(c *JanitorConfiguration, origin Origin) error {
	v := &validator{configfile.Validator{Source: origin.of}}
	v.check(c.TTL.Duration >= 0, "ttl", c.TTL.Duration, "must not be negative")
	v.check(*c.KeepPerOwner >= 0, "keepPerOwner", *c.KeepPerOwner, "must not be negative")
	v.check(len(c.Reasons) > 0 || *c.DeleteSucceeded, "reasons", c.Reasons, "is empty and deleteSucceeded is false: nothing would ever be deleted")
	for i, r := range c.Reasons {
		v.check(r != "", fmt.Sprintf("reasons[%d]", i), r, "must not be empty")
	}
	v.namespaces("namespaces", c.Namespaces)
	v.namespaces("excludeNamespaces", c.ExcludeNamespaces)
	v.overlap(c.Namespaces, c.ExcludeNamespaces)
	_, err := labels.Parse(*c.LabelSelector)
	v.check(err == nil, "labelSelector", *c.LabelSelector, configfile.Text(err))
	v.check(*c.RateLimit.DeletionsPerSecond > 0, "rateLimit.deletionsPerSecond", *c.RateLimit.DeletionsPerSecond, "must be positive")
	v.check(*c.RateLimit.Burst >= 1, "rateLimit.burst", *c.RateLimit.Burst, "must be at least 1")
	v.check(*c.Workers >= 1, "workers", *c.Workers, "must be at least 1")
	v.leaderElection(c.LeaderElection)
	v.Address("metricsBindAddress", *c.MetricsBindAddress, true)
	v.Address("healthProbeBindAddress", *c.HealthProbeBindAddress, true)
	v.avoidanceWebhook(c.AvoidanceWebhook)
	return v.Err()
}

func (v *validator) avoidanceWebhook(aw *AvoidanceWebhook) {
	v.Address("avoidanceWebhook.bindAddress", *aw.BindAddress, true)
	if addr := *aw.BindAddress; addr == "" || addr == "0" {
		return
	}
	v.check(*aw.CertFile != "", "avoidanceWebhook.certFile", *aw.CertFile, "must be set when the webhook is served")
	v.check(*aw.KeyFile != "", "avoidanceWebhook.keyFile", *aw.KeyFile, "must be set when the webhook is served")
	v.check(len(validation.IsDNS1123Label(*aw.Namespace)) == 0, "avoidanceWebhook.namespace", *aw.Namespace,
		"must be the namespace of the avoidance ConfigMaps (a DNS label) when the webhook is served")
}

func (v *validator) namespaces(field string, names []string) {
	for i, n := range names {
		msgs := validation.IsDNS1123Label(n)
		v.check(len(msgs) == 0, fmt.Sprintf("%s[%d]", field, i), n, fmt.Sprint(msgs))
	}
}

func (v *validator) overlap(include, exclude []string) {
	ex := make(map[string]bool, len(exclude))
	for _, n := range exclude {
		ex[n] = true
	}
	for i, n := range include {
		v.check(!ex[n], fmt.Sprintf("namespaces[%d]", i), n, "is also in excludeNamespaces")
	}
}

func (v *validator) leaderElection(le *LeaderElection) {
	if !*le.LeaderElect {
		return
	}
	v.check(len(validation.IsDNS1123Subdomain(*le.LeaseName)) == 0, "leaderElection.leaseName", *le.LeaseName, "must be a DNS subdomain")
	v.check(len(validation.IsDNS1123Label(*le.LeaseNamespace)) == 0, "leaderElection.leaseNamespace", *le.LeaseNamespace, "must be a DNS label")
	ld, rd, rp := le.LeaseDuration.Duration, le.RenewDeadline.Duration, le.RetryPeriod.Duration
	v.check(rp > 0, "leaderElection.retryPeriod", rp, "must be positive")
	v.check(ld > rd, "leaderElection.leaseDuration", ld, fmt.Sprintf("must be greater than renewDeadline %s", rd))
	v.check(float64(rd) > leaderElectionJitter*float64(rp), "leaderElection.renewDeadline", rd,
		fmt.Sprintf("must be greater than %.1f × retryPeriod %s", leaderElectionJitter, rp))
}
