package threshold

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUpdateContainerFsThresholds(t *testing.T) {
	base := Input{EvictionHard: map[string]string{
		"nodefs.available": "10%", "nodefs.inodesFree": "5%", "imagefs.available": "15%",
		"containerfs.available": "1%"}, EvictionHardSet: true,
		EvictionSoft:              map[string]string{"imagefs.available": "20%"},
		EvictionSoftGracePeriod:   map[string]string{"imagefs.available": "1m"},
		EnforceNodeAllocatableSet: true}
	cfg, err := ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name            string
		imageFs, split  bool
		wantContainerFs []string
		wantErr         string
	}{
		{"P13 single filesystem: user containerfs value is replaced by the nodefs threshold",
			false, false,
			[]string{"containerfs.available<10%", "containerfs.available (inert)", "containerfs.inodesFree<5%",
				"containerfs.inodesFree (inert)"},
			"found containerfs.available for hard eviction. ignoring"},
		{"imagefs with split containerfs: containerfs lives on nodefs",
			true, true,
			[]string{"containerfs.available<10%", "containerfs.available (inert)", "containerfs.inodesFree<5%",
				"containerfs.inodesFree (inert)"},
			"found containerfs.available for hard eviction. ignoring"},
		{"dedicated imagefs holding writable layers: containerfs copies imagefs, missing inode source is inert",
			true, false,
			[]string{"containerfs.available<15%", "containerfs.available<20% grace=1m0s",
				"containerfs.inodesFree (inert)", "containerfs.inodesFree (inert)"},
			"found containerfs.available for hard eviction. ignoring"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := UpdateContainerFsThresholds(cfg.Thresholds, tc.imageFs, tc.split)
			var cfs []string
			for _, s := range summary(got) {
				if strings.HasPrefix(s, "containerfs.") {
					cfs = append(cfs, s)
				}
			}
			if diff := cmp.Diff(cfs, tc.wantContainerFs); diff != "" {
				t.Errorf("containerfs thresholds (-got +want):\n%s", diff)
			}
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			if len(got) != len(cfg.Thresholds)+3 {
				t.Errorf("got %d thresholds, want %d (one replaced, three appended)", len(got), len(cfg.Thresholds)+3)
			}
		})
	}
	t.Run("no imagefs but split containerfs changes nothing", func(t *testing.T) {
		got, err := UpdateContainerFsThresholds(cfg.Thresholds, false, true)
		if err != nil {
			t.Errorf("err = %v", err)
		}
		if diff := cmp.Diff(summary(got), summary(cfg.Thresholds)); diff != "" {
			t.Errorf("thresholds changed (-got +want):\n%s", diff)
		}
	})
}

func TestInertThresholdNeverMet(t *testing.T) {
	got, _ := UpdateContainerFsThresholds(nil, false, false)
	for _, th := range got {
		if !th.Inert() {
			t.Errorf("%v derived from a missing source is not inert", th)
		}
	}
	if len(got) != 4 {
		t.Errorf("got %d derived thresholds, want 4", len(got))
	}
}

func TestContainerFsCopiesTheSoftGraceZeroThresholdOverTheHardOneLikeTheKubelet(t *testing.T) {
	// Found by the differential test (seed 11, case 980): evictionHard imagefs.available<10% and
	// evictionSoft imagefs.available<10Gi with grace 0s are both hard. The kubelet lists evictionHard
	// before evictionSoft and keeps the last, so containerfs copies 10Gi, whatever the sort order.
	cfg, err := ParseConfig(Input{
		EvictionHard: map[string]string{"imagefs.available": "10%"}, EvictionHardSet: true,
		EvictionSoft:            map[string]string{"imagefs.available": "10Gi"},
		EvictionSoftGracePeriod: map[string]string{"imagefs.available": "0s"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := UpdateContainerFsThresholds(cfg.Thresholds, true, false)
	var hard []string
	for _, th := range got {
		if th.Signal == "containerfs.available" && th.IsHard() && !th.Inert() {
			hard = append(hard, th.String())
		}
	}
	if diff := cmp.Diff(hard, []string{"containerfs.available<10Gi"}); diff != "" {
		t.Errorf("hard containerfs.available thresholds (-got +want):\n%s", diff)
	}
}
