package kubeconv

import "github.com/kube-pressure/pressure/internal/decision"

// Feature gate names that change an eviction decision (see decision.Gates).
const (
	gateAllowOverwriteTGPS       = "AllowOverwriteTerminationGracePeriodSeconds"
	gateMemoryBackedVolumes      = "InPlacePodVerticalScalingMemoryBackedVolumes"
	gateTaintComparisonOperators = "TaintTolerationComparisonOperators"
)

// Gates reads the decision-relevant feature gates from the configuration's featureGates (what the
// kubelet's /configz serves, or its config file sets). An absent gate is at its default: off in every
// supported release.
func (k KubeletConfig) Gates() decision.Gates {
	if k.Config == nil {
		return decision.Gates{}
	}
	fg := k.Config.FeatureGates
	return decision.Gates{
		AllowOverwriteTerminationGracePeriodSeconds:  fg[gateAllowOverwriteTGPS],
		InPlacePodVerticalScalingMemoryBackedVolumes: fg[gateMemoryBackedVolumes],
		TaintTolerationComparisonOperators:           fg[gateTaintComparisonOperators],
	}
}

// Semantics resolves the kubelet semantics of a node: version is status.nodeInfo.kubeletVersion (or
// an override), the gates come from this configuration.
func (k KubeletConfig) Semantics(version string) decision.Semantics {
	s := decision.ResolveSemantics(version)
	s.Gates = k.Gates()
	return s
}
