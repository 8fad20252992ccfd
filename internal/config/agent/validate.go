package agent

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Bounds Validate enforces.
const (
	minSyncPeriod         = time.Second
	maxSyncPeriod         = 10 * time.Minute
	minPollInterval       = 10 * time.Millisecond
	maxPDBFallbackWait    = time.Minute
	maxEvictionsPerMinute = 600
)

// FieldError is one validation problem: the file, the field, the value and why it is wrong.
type FieldError struct {
	File   string // the configuration file path, or "defaults" when there is none
	Field  string // JSON path in the file, e.g. eviction.pdbFallbackWait
	Value  any
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: field %s: value %q: %s", e.File, e.Field, fmt.Sprint(e.Value), e.Reason)
}

type validator struct {
	file string
	errs []error
}

func (v *validator) check(ok bool, field string, value any, reason string) {
	if !ok {
		v.errs = append(v.errs, &FieldError{File: v.file, Field: field, Value: value, Reason: reason})
	}
}

// Validate checks a defaulted configuration and returns every problem joined (errors.Join of
// *FieldError, in field order), or nil. file names the configuration file ("" → "defaults").
func Validate(c *AgentConfiguration, file string) error {
	if file == "" {
		file = "defaults"
	}
	v := &validator{file: file}
	v.check(*c.NodeName != "", "nodeName", *c.NodeName, "is required")
	if *c.NodeName != "" {
		msgs := validation.IsDNS1123Subdomain(*c.NodeName)
		v.check(len(msgs) == 0, "nodeName", *c.NodeName, fmt.Sprint(msgs))
	}
	p := Policy(*c.Policy)
	v.check(p == PolicyPressure || p == PolicyKubelet, "policy", *c.Policy, `must be "pressure" or "kubelet"`)
	v.headroom(p, c.Headroom)
	sync := c.SyncPeriod.Duration
	v.check(sync >= minSyncPeriod && sync <= maxSyncPeriod, "syncPeriod", sync,
		fmt.Sprintf("must be between %s and %s", minSyncPeriod, maxSyncPeriod))
	poll := c.Notifiers.PollInterval.Duration
	v.check(poll >= minPollInterval && poll <= sync, "notifiers.pollInterval", poll,
		fmt.Sprintf("must be between %s and syncPeriod %s", minPollInterval, sync))
	wait := c.Eviction.PDBFallbackWait.Duration
	v.check(wait >= 0 && wait <= maxPDBFallbackWait, "eviction.pdbFallbackWait", wait,
		fmt.Sprintf("must be between 0s and %s (the agent waits for it under hard pressure)", maxPDBFallbackWait))
	n := *c.MaxEvictionsPerMinute
	v.check(n >= 1 && n <= maxEvictionsPerMinute, "maxEvictionsPerMinute", n,
		fmt.Sprintf("must be between 1 and %d", maxEvictionsPerMinute))
	v.loopBreaker(c.LoopBreaker)
	v.address("metricsBindAddress", *c.MetricsBindAddress)
	v.address("healthProbeBindAddress", *c.HealthProbeBindAddress)
	v.absolute("cgroupRoot", *c.CgroupRoot, true)
	v.absolute("procRoot", *c.ProcRoot, true)
	v.absolute("kubeletRootDir", *c.KubeletRootDir, true)
	v.absolute("imageFsDir", *c.ImageFsDir, false)
	v.absolute("kubeletConfigFile", *c.KubeletConfigFile, false)
	return errors.Join(v.errs...)
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
			v.check(false, field, h[k], `is only used with policy "pressure"; policy "kubelet" uses the kubelet's thresholds as they are`)
			continue
		}
		v.check(validSignals[k], field, k, fmt.Sprintf("unknown eviction signal; valid: %v", signalNames()))
		_, err := parseHeadroom(k, h[k])
		v.check(err == nil, field, h[k], errText(err))
	}
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

func (v *validator) address(field, addr string) {
	if addr == "0" {
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
	v.check(err == nil, field, addr, `must be host:port, :port or "0" to disable: `+errText(err))
}

func (v *validator) absolute(field, path string, required bool) {
	if path == "" {
		v.check(!required, field, path, "must be an absolute path")
		return
	}
	v.check(filepath.IsAbs(path), field, path, "must be an absolute path")
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
