package vm_test

import (
	"testing"

	"github.com/kube-pressure/pressure/test/vm"
)

func TestOnlyTheStressPodCountsARaceWonWithoutCollateral(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    vm.RaceResult
		want bool
	}{
		{"the stress pod evicted by the agent, both neighbours running", vm.RaceResult{Evicted: []string{"agent:stress"}, Survivors: []string{"burstable", "guaranteed"}}, true},
		{"the stress pod evicted by the kubelet counts too", vm.RaceResult{Evicted: []string{"kubelet:stress"}, Survivors: []string{"burstable", "guaranteed"}}, true},
		{"a neighbour evicted besides the stress pod does not", vm.RaceResult{Evicted: []string{"agent:burstable", "agent:stress"}, Survivors: []string{"guaranteed"}}, false},
		{"a neighbour dead without an eviction does not", vm.RaceResult{Evicted: []string{"agent:stress"}, Survivors: []string{"guaranteed"}}, false},
		{"no eviction (an OOM kill ended the race) does not", vm.RaceResult{Survivors: []string{"burstable", "guaranteed"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := onlyTheStressPod(tc.r); got != tc.want {
				t.Errorf("onlyTheStressPod(%+v) = %v, want %v", tc.r, got, tc.want)
			}
		})
	}
}
