package agent

import "github.com/kube-pressure/pressure/internal/decision"

// kubeletSemantics resolves the node's kubelet release for the policy. A version that is unknown (not
// read yet) or unsupported follows the nearest known release; the warning is logged once per version.
// The feature gates stay at their defaults: the agent's kubelet configuration is reduced to its
// thresholds (the one gate-dependent point the policy meets, 1.34's soft-eviction grace with
// AllowOverwriteTerminationGracePeriodSeconds, then follows the gate's default, off).
func (a *Agent) kubeletSemantics() decision.Semantics {
	if a.KubeletVersion == nil {
		return decision.Semantics{}
	}
	v := a.KubeletVersion()
	sem := decision.ResolveSemantics(v)
	if v == "" {
		return decision.Semantics{} // not read yet: the pinned release, no warning until the node is read
	}
	if sem.Warning != "" && a.st.semanticsWarned != v {
		a.st.semanticsWarned = v
		if a.Log != nil {
			a.Log.Warn("kubelet semantics: "+sem.Warning, "kubeletVersion", v)
		}
	}
	return sem
}
