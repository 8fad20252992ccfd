// Package threshold parses and evaluates the kubelet's eviction thresholds with the semantics of
// kubelet v1.34 to v1.37, the same in each (pkg/kubelet/eviction/helpers.go,
// cmd/kubelet/app/server.go), quirks included:
//
//   - ParseConfig turns the raw eviction settings (Input, as found in a KubeletConfiguration or on
//     the kubelet's command line) into a Config: defaults and mergeDefaultEvictionSettings, hard and
//     soft thresholds, grace periods, minimum reclaims attached to every threshold of their signal,
//     and the allocatableMemory.available copies of hard memory thresholds when "pods" is enforced.
//     Errors carry the kubelet's exact text, prefixed with the setting and key they belong to; all
//     problems are reported (errors.Join) in a deterministic order, where the kubelet stops at the
//     first one.
//   - ParseFlagMap and ParseKeyValueFlagMap read the --eviction-hard / --eviction-soft
//     ("signal<value,...") and --eviction-soft-grace-period / --eviction-minimum-reclaim
//     ("signal=value,...") flag forms like component-base's cliflag types.
//   - Met decides whether a threshold is met by an observation (strictly less than, float32
//     percentages, optional minimum reclaim). FormatThreshold and FormatAvailable print amounts in
//     the kubelet's canonical quantity form.
//   - UpdateContainerFsThresholds derives the containerfs thresholds from the filesystem layout.
//   - Allocatable computes node allocatable and the pods cgroup limit with every intermediate step.
//
// Config.Thresholds is sorted by signal name, then hard before soft, then grace period, then value
// (see SortThresholds), so map iteration order never reaches a result.
//
// The package is pure: it imports only the standard library, the signal package and
// k8s.io/apimachinery's resource.Quantity, and performs no I/O.
package threshold
