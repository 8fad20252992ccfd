package soak

import (
	"testing"

	"github.com/kube-pressure/pressure/test/evictaudit"
)

func TestAgentDelete(t *testing.T) {
	del := evictaudit.Write{Verb: "delete", Resource: "pods", Namespace: "soak-1-0", Name: "pdb-x", User: agentAccount, Code: 200}
	for _, tc := range []struct {
		name string
		mut  func(*evictaudit.Write)
		want bool
	}{
		{"the agent's carried-out DELETE of a pod counts", func(*evictaudit.Write) {}, true},
		{"the janitor's DELETE of an Evicted shell does not", func(w *evictaudit.Write) {
			w.User = "system:serviceaccount:pressure-system:pressure-janitor"
		}, false},
		{"a refused DELETE does not", func(w *evictaudit.Write) { w.Code = 409 }, false},
		{"a dry-run DELETE does not", func(w *evictaudit.Write) { w.DryRun = true }, false},
		{"an eviction request is not a DELETE", func(w *evictaudit.Write) { w.Verb, w.Subresource, w.Code = "create", "eviction", 201 }, false},
		{"the agent's taint patch of the node is not a DELETE of a pod", func(w *evictaudit.Write) { w.Verb, w.Resource = "patch", "nodes" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := del
			tc.mut(&w)
			if got := agentDelete(w); got != tc.want {
				t.Errorf("agentDelete(%s) = %v, want %v", w, got, tc.want)
			}
		})
	}
}
