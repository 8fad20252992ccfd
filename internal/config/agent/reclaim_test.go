package agent

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/policy"
)

func TestTheReclaimRungReachesThePolicy(t *testing.T) {
	c, err := complete(t, filepath.Join("testdata", "valid-reclaim-rung.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pc := c.PolicyConfig()
	want := policy.ReclaimAction{Enabled: true, MaxBytes: 1 << 30, Settle: 5 * time.Second, MinInterval: 10 * time.Second}
	if pc.Reclaim.Action != want || pc.Reclaim.KubeletHorizon != 0 {
		t.Errorf("PolicyConfig().Reclaim = %+v, want action %+v and no kubelet horizon", pc.Reclaim, want)
	}
	if err := pc.Validate(); err != nil {
		t.Errorf("PolicyConfig().Validate(): %v", err)
	}
}

func TestTheReclaimRungDefaultsOff(t *testing.T) {
	c, err := complete(t, filepath.Join("testdata", "valid-reclaim-aware-policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if pc := c.PolicyConfig(); pc.Reclaim.Action.Enabled || pc.Reclaim.KubeletHorizon != policy.DefaultKubeletHorizon {
		t.Errorf("PolicyConfig().Reclaim = %+v, want the rung off and the %s horizon", pc.Reclaim, policy.DefaultKubeletHorizon)
	}
}
