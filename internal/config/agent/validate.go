package agent

import (
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kube-pressure/pressure/internal/config/configfile"
)

// Bounds Validate enforces.
const (
	minSyncPeriod         = time.Second
	maxSyncPeriod         = 10 * time.Minute
	maxPodStatsMaxAge     = 10 * time.Minute
	maxEvictionLead       = time.Minute
	maxPodDiskWalkEntries = 100_000_000
	minPollInterval       = 10 * time.Millisecond
	maxPollMaxInterval    = 10 * time.Second
	minPollRampRate       = 1 << 20
	minPSIWindow          = 500 * time.Millisecond
	maxPSIWindow          = 10 * time.Second
	minAPITimeout         = 100 * time.Millisecond
	maxAPITimeout         = 30 * time.Second
	minKubeletRefresh     = time.Second
	maxKubeletRefresh     = time.Hour
	maxPDBFallbackWait    = time.Minute
	maxEvictionsPerMinute = 600
)

type validator struct{ configfile.Validator }

func (v *validator) check(ok bool, field string, value any, reason string) {
	v.Check(ok, field, value, reason)
}

// Validate checks a defaulted configuration and returns every problem joined (errors.Join of
// *FieldError, in field order), or nil. file names the configuration file ("" → "defaults").
func Validate(c *AgentConfiguration, file string) error {
	if file == "" {
		file = "defaults"
	}
	v := &validator{configfile.Validator{Source: func(string) string { return file }}}
	v.check(*c.NodeName != "", "nodeName", *c.NodeName, "is required")
	if *c.NodeName != "" {
		msgs := validation.IsDNS1123Subdomain(*c.NodeName)
		v.check(len(msgs) == 0, "nodeName", *c.NodeName, fmt.Sprint(msgs))
	}
	p := Policy(*c.Policy)
	v.check(p == PolicyPressure || p == PolicyKubelet || p == PolicyReclaimAware, "policy", *c.Policy,
		`must be "pressure", "kubelet" or "reclaim-aware"`)
	v.headroom(p, c.Headroom)
	lead := c.EvictionLead.Duration
	v.check(lead >= 0 && lead <= maxEvictionLead, "evictionLead", lead, fmt.Sprintf("must be between 0s (off) and %s", maxEvictionLead))
	v.reclaim(c.Reclaim)
	sync := c.SyncPeriod.Duration
	v.check(sync >= minSyncPeriod && sync <= maxSyncPeriod, "syncPeriod", sync,
		fmt.Sprintf("must be between %s and %s", minSyncPeriod, maxSyncPeriod))
	age := c.PodStatsMaxAge.Duration
	v.check(age == 0 || (age >= sync && age <= maxPodStatsMaxAge), "podStatsMaxAge", age,
		fmt.Sprintf("must be 0s (every sync) or between syncPeriod %s and %s", sync, maxPodStatsMaxAge))
	api := c.APITimeout.Duration
	v.check(api >= minAPITimeout && api <= maxAPITimeout, "apiTimeout", api,
		fmt.Sprintf("must be between %s and %s", minAPITimeout, maxAPITimeout))
	refresh := c.KubeletConfigRefresh.Duration
	v.check(refresh == 0 || (refresh >= minKubeletRefresh && refresh <= maxKubeletRefresh), "kubeletConfigRefresh", refresh,
		fmt.Sprintf("must be 0s (never) or between %s and %s", minKubeletRefresh, maxKubeletRefresh))
	poll := c.Notifiers.PollInterval.Duration
	v.check(poll >= minPollInterval && poll <= sync, "notifiers.pollInterval", poll,
		fmt.Sprintf("must be between %s and syncPeriod %s", minPollInterval, sync))
	v.notifiers(c.Notifiers)
	wait := c.Eviction.PDBFallbackWait.Duration
	v.check(wait >= 0 && wait <= maxPDBFallbackWait, "eviction.pdbFallbackWait", wait,
		fmt.Sprintf("must be between 0s and %s (the agent waits for it under hard pressure)", maxPDBFallbackWait))
	n := *c.MaxEvictionsPerMinute
	v.check(n >= 1 && n <= maxEvictionsPerMinute, "maxEvictionsPerMinute", n,
		fmt.Sprintf("must be between 1 and %d", maxEvictionsPerMinute))
	v.loopBreaker(c.LoopBreaker)
	v.Address("metricsBindAddress", *c.MetricsBindAddress, false)
	v.Address("healthProbeBindAddress", *c.HealthProbeBindAddress, false)
	v.absolute("cgroupRoot", *c.CgroupRoot, true)
	v.absolute("procRoot", *c.ProcRoot, true)
	v.absolute("kubeletRootDir", *c.KubeletRootDir, true)
	v.absolute("imageFsDir", *c.ImageFsDir, false)
	v.absolute("podLogsDir", *c.PodLogsDir, false)
	v.absolute("kubeletPodsDir", *c.KubeletPodsDir, false)
	v.check(*c.PodDiskWalkMaxEntries >= 1000 && *c.PodDiskWalkMaxEntries <= maxPodDiskWalkEntries, "podDiskWalkMaxEntries",
		*c.PodDiskWalkMaxEntries, fmt.Sprintf("must be between 1000 and %d (each entry is a few hundred nanoseconds of the sync)", maxPodDiskWalkEntries))
	v.check(c.PodDiskWalkTimeout.Duration >= 10*time.Millisecond && c.PodDiskWalkTimeout.Duration <= time.Minute, "podDiskWalkTimeout",
		c.PodDiskWalkTimeout.Duration.String(), "must be between 10ms and 1m")
	v.absolute("kubeletConfigFile", *c.KubeletConfigFile, false)
	return v.Err()
}

func (v *validator) headroom(p Policy, h map[string]string) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		field := "headroom." + k
		if p == PolicyKubelet {
			v.check(false, field, h[k], `is only used with policy "pressure" or "reclaim-aware"; policy "kubelet" uses the kubelet's thresholds as they are`)
			continue
		}
		v.check(validSignals[k], field, k, fmt.Sprintf("unknown eviction signal; valid: %v", signalNames()))
		_, err := parseHeadroom(k, h[k])
		v.check(err == nil, field, h[k], configfile.Text(err))
	}
}

// notifiers checks the PSI window against the kernel's bounds and the adaptive poll's settings.
func (v *validator) notifiers(n *Notifiers) {
	w := n.PSIWindow.Duration
	v.check(w >= minPSIWindow && w <= maxPSIWindow, "notifiers.psiWindow", w,
		fmt.Sprintf("must be between %s and %s (the kernel's bounds of a PSI trigger window)", minPSIWindow, maxPSIWindow))
	v.check(n.PollMaxInterval.Duration >= n.PollInterval.Duration && n.PollMaxInterval.Duration <= maxPollMaxInterval,
		"notifiers.pollMaxInterval", n.PollMaxInterval.Duration,
		fmt.Sprintf("must be between notifiers.pollInterval %s and %s", n.PollInterval.Duration, maxPollMaxInterval))
	v.check(n.PollRampRate.Sign() > 0 && n.PollRampRate.Value() >= minPollRampRate, "notifiers.pollRampRate", n.PollRampRate.String(),
		"must be at least 1Mi (bytes of available memory per second)")
}

func (v *validator) loopBreaker(lb *LoopBreaker) {
	msgs := validation.IsQualifiedName(*lb.TaintKey)
	v.check(len(msgs) == 0, "loopBreaker.taintKey", *lb.TaintKey, fmt.Sprint(msgs))
	v.check(lb.Window.Duration > 0, "loopBreaker.window", lb.Window.Duration, "must be positive")
	v.check(lb.Cooldown.Duration > 0, "loopBreaker.cooldown", lb.Cooldown.Duration, "must be positive")
	v.check(lb.TaintHysteresis.Duration >= 0, "loopBreaker.taintHysteresis", lb.TaintHysteresis.Duration, "must not be negative")
	v.check(*lb.LoopEvictions >= 2, "loopBreaker.loopEvictions", *lb.LoopEvictions, "must be at least 2")
	v.check(lb.LoopCooldown.Duration >= lb.Cooldown.Duration, "loopBreaker.loopCooldown", lb.LoopCooldown.Duration,
		"must be at least loopBreaker.cooldown")
	if ns := *lb.AvoidanceNamespace; ns != "" {
		msgs := validation.IsDNS1123Label(ns)
		v.check(len(msgs) == 0, "loopBreaker.avoidanceNamespace", ns, fmt.Sprint(msgs))
	}
	msgs = validation.IsDNS1123Subdomain(*lb.AvoidanceNamePrefix + "node")
	v.check(*lb.AvoidanceNamePrefix != "" && len(msgs) == 0, "loopBreaker.avoidanceNamePrefix", *lb.AvoidanceNamePrefix,
		"must be a non-empty prefix of an object name (lower case alphanumerics, '-' and '.')")
}

func (v *validator) absolute(field, path string, required bool) {
	if path == "" {
		v.check(!required, field, path, "must be an absolute path")
		return
	}
	v.check(filepath.IsAbs(path), field, path, "must be an absolute path")
}

// reclaim checks the reclaim section (policy "reclaim-aware").
func (v *validator) reclaim(r *Reclaim) {
	h := r.KubeletHorizon.Duration
	v.check(h >= 0 && h <= time.Minute, "reclaim.kubeletHorizon", h, "must be between 0s (the fixed margin alone) and 1m0s")
	a := r.Action
	v.check(a.MaxBytes.Sign() > 0, "reclaim.action.maxBytes", a.MaxBytes.String(), "must be positive")
	s := a.Settle.Duration
	v.check(s > 0 && s <= time.Minute, "reclaim.action.settle", s, "must be above 0s and at most 1m0s")
	m := a.MinInterval.Duration
	v.check(m >= 0 && m <= 10*time.Minute, "reclaim.action.minInterval", m, "must be between 0s and 10m0s")
}
