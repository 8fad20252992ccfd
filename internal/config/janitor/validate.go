package janitor

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// leaderElectionJitter is client-go's leaderelection.JitterFactor: RenewDeadline must exceed
// RetryPeriod times it.
const leaderElectionJitter = 1.2

// FieldError is one validation problem: where the value came from, the field, the value and why
// it is wrong.
type FieldError struct {
	Source string // file path, or the flag that set the field
	Field  string // JSON path in the file, e.g. rateLimit.burst
	Value  any
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: field %s: value %q: %s", e.Source, e.Field, fmt.Sprint(e.Value), e.Reason)
}

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

type validator struct {
	origin Origin
	errs   []error
}

func (v *validator) check(ok bool, field string, value any, reason string) {
	if !ok {
		v.errs = append(v.errs, &FieldError{Source: v.origin.of(field), Field: field, Value: value, Reason: reason})
	}
}

// Validate checks a defaulted configuration and returns every problem joined (errors.Join of
// *FieldError), or nil.
func Validate(c *JanitorConfiguration, origin Origin) error {
	v := &validator{origin: origin}
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
	v.check(err == nil, "labelSelector", *c.LabelSelector, errText(err))
	v.check(*c.RateLimit.DeletionsPerSecond > 0, "rateLimit.deletionsPerSecond", *c.RateLimit.DeletionsPerSecond, "must be positive")
	v.check(*c.RateLimit.Burst >= 1, "rateLimit.burst", *c.RateLimit.Burst, "must be at least 1")
	v.check(*c.Workers >= 1, "workers", *c.Workers, "must be at least 1")
	v.leaderElection(c.LeaderElection)
	v.address("metricsBindAddress", *c.MetricsBindAddress)
	v.address("healthProbeBindAddress", *c.HealthProbeBindAddress)
	return errors.Join(v.errs...)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
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

func (v *validator) address(field, addr string) {
	if addr == "" || addr == "0" {
		return
	}
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		var n int
		n, err = strconv.Atoi(port)
		if err == nil && (n < 0 || n > 65535) {
			err = fmt.Errorf("port %d out of range", n)
		}
	}
	v.check(err == nil, field, addr, "must be host:port or \"0\" to disable: "+errText(err))
}
