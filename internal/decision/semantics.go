package decision

import (
	"fmt"
	"strconv"
	"strings"
)

// Supported kubelet minors (Kubernetes 1.MINOR): the eviction managers whose sources the core follows.
const (
	OldestMinor  = 34
	NewestMinor  = 37
	DefaultMinor = 37 // the pinned v1.37.2: the semantics when no version is known
)

// Gates are the kubelet feature gates that change an eviction decision. The zero value is every gate
// at its default in every supported release (all off).
type Gates struct {
	// AllowOverwriteTerminationGracePeriodSeconds (1.34 only, deprecated, default off): when on, a soft
	// eviction's grace is evictionMaxPodGracePeriod even when the pod's terminationGracePeriodSeconds
	// is shorter. 1.35 and later ignore the gate.
	AllowOverwriteTerminationGracePeriodSeconds bool `json:"allowOverwriteTerminationGracePeriodSeconds,omitempty"`
	// InPlacePodVerticalScalingMemoryBackedVolumes (1.37, alpha, default off): when on, memory-backed
	// emptyDir volumes are exempt from the sizeLimit eviction (tmpfs enforces the size itself).
	InPlacePodVerticalScalingMemoryBackedVolumes bool `json:"inPlacePodVerticalScalingMemoryBackedVolumes,omitempty"`
	// TaintTolerationComparisonOperators (1.35+, alpha, default off) is passed to admission's toleration
	// check of node.kubernetes.io/memory-pressure:NoSchedule. That taint has no value, so a Lt/Gt
	// toleration never matches it with the gate on or off: it changes no decision and is kept only so
	// that /configz gates round-trip.
	TaintTolerationComparisonOperators bool `json:"taintTolerationComparisonOperators,omitempty"`
}

// Semantics says which kubelet release's eviction manager Step follows. The zero value is DefaultMinor
// with default gates, the behaviour before versions were known.
type Semantics struct {
	// Minor is the Kubernetes minor (34..37); 0 means DefaultMinor.
	Minor int `json:"minor"`
	// Version is the kubelet version the semantics were resolved from, as reported ("" = unknown).
	Version string `json:"version,omitempty"`
	// Gates are the kubelet's feature gates that matter (from /configz where it serves them).
	Gates Gates `json:"gates"`
	// Warning is set when Version was unknown, unparsable or outside OldestMinor..NewestMinor and the
	// nearest known semantics are used instead.
	Warning string `json:"warning,omitempty"`
}

// MinorOrDefault is the minor in effect: Minor, or DefaultMinor for the zero value.
func (s Semantics) MinorOrDefault() int {
	if s.Minor == 0 {
		return DefaultMinor
	}
	return s.Minor
}

// String names the semantics, e.g. "kubelet 1.37 (v1.37.2-eks-1)".
func (s Semantics) String() string {
	out := fmt.Sprintf("kubelet 1.%d", s.MinorOrDefault())
	if s.Version != "" {
		out += " (" + s.Version + ")"
	}
	if on := s.Gates.On(); len(on) > 0 {
		out += ", gates on: " + strings.Join(on, ", ")
	}
	return out
}

// On lists the gates that are on, by name (sorted).
func (g Gates) On() []string {
	var on []string
	if g.AllowOverwriteTerminationGracePeriodSeconds {
		on = append(on, "AllowOverwriteTerminationGracePeriodSeconds")
	}
	if g.InPlacePodVerticalScalingMemoryBackedVolumes {
		on = append(on, "InPlacePodVerticalScalingMemoryBackedVolumes")
	}
	if g.TaintTolerationComparisonOperators {
		on = append(on, "TaintTolerationComparisonOperators")
	}
	return on
}

// ResolveSemantics maps a kubelet version as the node reports it (status.nodeInfo.kubeletVersion:
// "v1.34.4", "v1.37.2-eks-4a1b2c", "1.35.0+k3s1") to its semantics. An empty, unparsable or
// unsupported version gives the nearest known semantics (DefaultMinor when nothing can be parsed) and
// a Warning; it never fails.
func ResolveSemantics(version string) Semantics {
	s := Semantics{Version: version}
	if strings.TrimSpace(version) == "" {
		s.Minor = DefaultMinor
		s.Warning = fmt.Sprintf("kubelet version unknown: using kubelet 1.%d semantics", DefaultMinor)
		return s
	}
	major, minor, ok := parseMajorMinor(version)
	switch {
	case !ok || major != 1:
		s.Minor = DefaultMinor
		s.Warning = fmt.Sprintf("kubelet version %q: not a Kubernetes 1.x version: using kubelet 1.%d semantics",
			version, DefaultMinor)
	case minor < OldestMinor:
		s.Minor = OldestMinor
		s.Warning = fmt.Sprintf("kubelet version %q: older than 1.%d, the oldest supported: using kubelet 1.%d semantics",
			version, OldestMinor, OldestMinor)
	case minor > NewestMinor:
		s.Minor = NewestMinor
		s.Warning = fmt.Sprintf("kubelet version %q: newer than 1.%d, the newest supported: using kubelet 1.%d semantics",
			version, NewestMinor, NewestMinor)
	default:
		s.Minor = minor
	}
	return s
}

// parseMajorMinor reads "v1.37.2-eks-1" as 1, 37.
func parseMajorMinor(v string) (int, int, bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err := strconv.Atoi(parts[0])
	if err != nil {
		return 0, 0, false
	}
	minorText := parts[1]
	if i := strings.IndexFunc(minorText, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minorText = minorText[:i]
	}
	minor, err := strconv.Atoi(minorText)
	if err != nil {
		return 0, 0, false
	}
	return major, minor, true
}

// sidecarEphemeralLimits: 1.37 enforces restartable init containers' ephemeral-storage limits.
func (s Semantics) sidecarEphemeralLimits() bool { return s.MinorOrDefault() >= 37 }

// memoryEmptyDirExempt: 1.37 with InPlacePodVerticalScalingMemoryBackedVolumes skips Memory emptyDirs.
func (s Semantics) memoryEmptyDirExempt() bool {
	return s.MinorOrDefault() >= 37 && s.Gates.InPlacePodVerticalScalingMemoryBackedVolumes
}

// softGraceIgnoresPod: 1.34 with AllowOverwriteTerminationGracePeriodSeconds ignores the pod's
// terminationGracePeriodSeconds on the soft path.
func (s Semantics) softGraceIgnoresPod() bool {
	return s.MinorOrDefault() == 34 && s.Gates.AllowOverwriteTerminationGracePeriodSeconds
}
