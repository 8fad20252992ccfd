package threshold

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/signal"
)

// DefaultPressureTransitionPeriod is the kubelet's default evictionPressureTransitionPeriod.
const DefaultPressureTransitionPeriod = 5 * time.Minute

// NodeAllocatableEnforcementPods is the enforceNodeAllocatable entry that limits the pods cgroup.
const NodeAllocatableEnforcementPods = "pods"

// DefaultEvictionHard returns a fresh copy of the kubelet's Linux default hard thresholds
// (pkg/kubelet/eviction/defaults_linux.go; imagefs.inodesFree since v1.30).
func DefaultEvictionHard() map[string]string {
	return map[string]string{
		"memory.available":   "100Mi",
		"nodefs.available":   "10%",
		"nodefs.inodesFree":  "5%",
		"imagefs.available":  "15%",
		"imagefs.inodesFree": "5%",
	}
}

// Input holds the raw eviction settings as configured. Absent is not zero: the *Set booleans and
// the pointer say whether a setting was given at all.
type Input struct {
	// EvictionHard is the evictionHard map; EvictionHardSet says whether it was configured at all
	// (a config file without the field, or a command line without --eviction-hard, gets the defaults).
	EvictionHard    map[string]string
	EvictionHardSet bool
	// MergeDefaultEvictionSettings adds the missing default hard thresholds to a configured map.
	MergeDefaultEvictionSettings bool
	EvictionSoft                 map[string]string
	EvictionSoftGracePeriod      map[string]string
	EvictionMinimumReclaim       map[string]string
	// EvictionPressureTransitionPeriod nil means unset (5m). A config file's "0s" is unset too;
	// converters must pass nil for it (only the flag can make it 0).
	EvictionPressureTransitionPeriod *time.Duration
	EvictionMaxPodGracePeriod        int32
	// EnforceNodeAllocatable is used as is when EnforceNodeAllocatableSet, else it is ["pods"].
	EnforceNodeAllocatable    []string
	EnforceNodeAllocatableSet bool
	// ExperimentalAllocatableIgnoreEviction is the --experimental-allocatable-ignore-eviction flag.
	ExperimentalAllocatableIgnoreEviction bool
	// KubeReserved and SystemReserved map resource names to quantities ("memory": "1Gi").
	KubeReserved            map[string]string
	SystemReserved          map[string]string
	KernelMemcgNotification bool
	// ImageGCHighThresholdPercent is the kubelet's imageGCHighThresholdPercent; nil means unset (85).
	ImageGCHighThresholdPercent *int32
}

// DefaultImageGCHighThresholdPercent is the kubelet's default imageGCHighThresholdPercent: its image GC
// starts when the image filesystem is 85% used (15% available).
const DefaultImageGCHighThresholdPercent = 85

// EffectiveEvictionHard returns the evictionHard map the kubelet uses after defaulting and
// merging (cmd/kubelet/app/server.go loadConfigFile). The input map is not modified.
func (in Input) EffectiveEvictionHard() map[string]string {
	if !in.EvictionHardSet {
		return DefaultEvictionHard()
	}
	out := make(map[string]string, len(in.EvictionHard))
	for k, v := range in.EvictionHard {
		out[k] = v
	}
	if in.MergeDefaultEvictionSettings {
		for k, v := range DefaultEvictionHard() {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
	}
	return out
}

// ParseConfig turns raw settings into a Config like the kubelet's ParseThresholdConfig plus the
// settings around it. Every problem is reported, joined in a fixed order (evictionHard,
// evictionSoft, evictionSoftGracePeriod, evictionMinimumReclaim, missing grace periods,
// kubeReserved, systemReserved; keys sorted), each a *SettingError wrapping the kubelet's text.
func ParseConfig(in Input) (Config, error) {
	var errs []error
	hard := parseStatements("evictionHard", in.EffectiveEvictionHard(), &errs)
	soft := parseStatements("evictionSoft", in.EvictionSoft, &errs)
	grace := parseGraces(in.EvictionSoftGracePeriod, &errs)
	reclaim := parseReclaims(in.EvictionMinimumReclaim, &errs)
	for i := range soft {
		d, ok := grace[soft[i].Signal]
		if _, given := in.EvictionSoftGracePeriod[string(soft[i].Signal)]; !ok && given {
			continue // the grace period is given but invalid: already reported
		}
		if !ok {
			errs = append(errs, &SettingError{Setting: "evictionSoftGracePeriod", Key: string(soft[i].Signal),
				Err: kubeletErrorf(ErrMissingGracePeriod,
					"grace period must be specified for the soft eviction threshold %v", soft[i].Signal)})
			continue
		}
		soft[i].GracePeriod = d
		soft[i].FromSoft = true
	}
	all := append(append([]Threshold{}, hard...), soft...)
	for i := range all {
		if mr, ok := reclaim[all[i].Signal]; ok {
			mr := mr
			all[i].MinReclaim = &mr
		}
	}
	cfg := Config{
		PressureTransitionPeriod:              DefaultPressureTransitionPeriod,
		MaxPodGracePeriodSeconds:              in.EvictionMaxPodGracePeriod,
		KernelMemcgNotification:               in.KernelMemcgNotification,
		EnforceNodeAllocatable:                []string{NodeAllocatableEnforcementPods},
		ExperimentalAllocatableIgnoreEviction: in.ExperimentalAllocatableIgnoreEviction,
		ReservationThresholds:                 hard,
		ImageGCHighThresholdPercent:           in.ImageGCHighThresholdPercent,
	}
	if in.EvictionPressureTransitionPeriod != nil {
		cfg.PressureTransitionPeriod = *in.EvictionPressureTransitionPeriod
	}
	if in.EnforceNodeAllocatableSet {
		cfg.EnforceNodeAllocatable = append([]string{}, in.EnforceNodeAllocatable...)
	}
	if cfg.PodsEnforced() && !in.ExperimentalAllocatableIgnoreEviction {
		all = AddAllocatableThresholds(all)
	}
	if in.ExperimentalAllocatableIgnoreEviction {
		cfg.ReservationThresholds = nil
	}
	cfg.KubeReserved = parseReserved("kubeReserved", in.KubeReserved, &errs)
	cfg.SystemReserved = parseReserved("systemReserved", in.SystemReserved, &errs)
	SortThresholds(all)
	SortThresholds(cfg.ReservationThresholds)
	cfg.Thresholds = all
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return cfg, nil
}

// AddAllocatableThresholds appends, for every hard memory.available threshold, an
// allocatableMemory.available copy with the same value and min-reclaim (kubelet
// addAllocatableThresholds). The input slice is not modified.
func AddAllocatableThresholds(ts []Threshold) []Threshold {
	out := append([]Threshold{}, ts...)
	for _, t := range ts {
		if t.Signal == signal.MemoryAvailable && t.IsHard() {
			out = append(out, Threshold{Signal: signal.AllocatableMemoryAvailable, Operator: t.Operator,
				Value: t.Value, MinReclaim: t.MinReclaim})
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func parseStatements(setting string, m map[string]string, errs *[]error) []Threshold {
	var out []Threshold
	for _, k := range sortedKeys(m) {
		t, ok, err := ParseThresholdStatement(k, m[k])
		if err != nil {
			*errs = append(*errs, &SettingError{Setting: setting, Key: k, Value: m[k], Err: err})
			continue
		}
		if ok {
			out = append(out, t)
		}
	}
	return out
}

func parseGraces(m map[string]string, errs *[]error) map[signal.Signal]time.Duration {
	out := map[signal.Signal]time.Duration{}
	for _, k := range sortedKeys(m) {
		d, err := ParseGracePeriod(k, m[k])
		if err != nil {
			*errs = append(*errs, &SettingError{Setting: "evictionSoftGracePeriod", Key: k, Value: m[k], Err: err})
			continue
		}
		out[signal.Signal(k)] = d
	}
	return out
}

func parseReclaims(m map[string]string, errs *[]error) map[signal.Signal]Value {
	out := map[signal.Signal]Value{}
	for _, k := range sortedKeys(m) {
		v, err := ParseMinimumReclaim(k, m[k])
		if err != nil {
			*errs = append(*errs, &SettingError{Setting: "evictionMinimumReclaim", Key: k, Value: m[k], Err: err})
			continue
		}
		out[signal.Signal(k)] = v
	}
	return out
}

// reservable are the resources kubeReserved/systemReserved accept (kubelet parseResourceList).
var reservable = map[string]bool{"cpu": true, "memory": true, "ephemeral-storage": true, "pid": true}

func parseReserved(setting string, m map[string]string, errs *[]error) map[string]resource.Quantity {
	if len(m) == 0 {
		return nil
	}
	out := map[string]resource.Quantity{}
	for _, k := range sortedKeys(m) {
		if err := parseReservedEntry(k, m[k], out); err != nil {
			*errs = append(*errs, &SettingError{Setting: setting, Key: k, Value: m[k], Err: err})
		}
	}
	return out
}

func parseReservedEntry(k, v string, out map[string]resource.Quantity) error {
	if !reservable[k] {
		return kubeletErrorf(ErrInvalidReservation, "cannot reserve %q resource", k)
	}
	q, err := ParseQuantity(v)
	if err != nil {
		return &kubeletError{reason: ErrInvalidReservation, cause: err,
			msg: fmt.Sprintf("failed to parse quantity %q for %q resource: %v", v, k, err)}
	}
	if q.Sign() == -1 {
		return kubeletErrorf(ErrInvalidReservation, "resource quantity for %q cannot be negative: %v", k, v)
	}
	out[k] = q
	return nil
}
