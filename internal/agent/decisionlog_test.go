package agent

import (
	"testing"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/policy"
)

func TestTheEvictLineCarriesTheRungTargetWalkAndKillsOfItsStepInOrder(t *testing.T) {
	plan := policy.Plan{Trace: decision.Trace{
		{Kind: policy.KindReclaim, Subject: "allocatableMemory.available", Detail: "available 198Mi by the working set"},
		{Kind: policy.KindReclaimAction, Subject: "allocatableMemory.available", Detail: "too late to reclaim, evicting"},
		{Kind: policy.KindTarget, Subject: "allocatableMemory.available", Detail: "need 30Mi"},
		{Kind: policy.KindTaint, Subject: "pressure", Detail: "wanted true"},
		{Kind: policy.KindWalk, Subject: "default/hog", Detail: "1. frees 60Mi; take"},
		{Kind: policy.KindKill, Subject: "default/hog", Detail: "SIGKILL on the node"},
	}}
	want := "reclaim-action allocatableMemory.available: too late to reclaim, evicting | " +
		"target allocatableMemory.available: need 30Mi | walk default/hog: 1. frees 60Mi; take | kill default/hog: SIGKILL on the node"
	if got := decisionLog(plan); got != want {
		t.Errorf("decisionLog = %q\nwant %q", got, want)
	}
}
