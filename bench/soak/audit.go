package soak

import (
	"strings"

	"github.com/kube-pressure/pressure/test/evictaudit"
)

// agentAccount is the user the API server sees for the chart's agent (release "pressure" in
// "pressure-system": its ServiceAccount is the release's fullname plus "-agent").
const agentAccount = "system:serviceaccount:pressure-system:pressure-agent"

// agentDelete reports whether w is a DELETE of a pod by the agent that the API server carried out (200,
// not a dry run): the rung after a PodDisruptionBudget refused a hard eviction.
func agentDelete(w evictaudit.Write) bool {
	return w.Verb == "delete" && w.Group == "" && w.Resource == "pods" && w.Subresource == "" && w.Code == 200 && !w.DryRun &&
		strings.EqualFold(w.User, agentAccount)
}
