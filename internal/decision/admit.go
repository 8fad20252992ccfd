package decision

import (
	"fmt"
	"strings"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

// RejectedPrefix prefixes the admission message in the rejected pod's status message (kubelet rejectPod).
const RejectedPrefix = "Pod was rejected: "

// Admit is the kubelet eviction manager's admission handler (§5.1) over the reported conditions
// (State.Conditions or Decision.Conditions, including the transition-period tail). It returns whether c
// is admitted and, when not, the rejection message ("The node had condition: [DiskPressure]. "); the
// pod then becomes Failed with reason Evicted and status message RejectedPrefix + message. The kubelet
// prints the conditions in map order; we print them as given (State keeps them sorted by name).
func Admit(conditions []signal.NodeCondition, c rank.Candidate) (bool, string) {
	if len(conditions) == 0 || c.Critical {
		return true, ""
	}
	if len(conditions) == 1 && conditions[0] == signal.MemoryPressure {
		if c.QOSClass != rank.QOSBestEffort || c.ToleratesMemoryPressure {
			return true, ""
		}
	}
	names := make([]string, len(conditions))
	for i, cond := range conditions {
		names[i] = string(cond)
	}
	return false, fmt.Sprintf("The node had condition: [%s]. ", strings.Join(names, " "))
}
