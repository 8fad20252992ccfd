package soak

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestConfigFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		check   func(config) bool
		wantErr bool
	}{
		{"unset is the short version: 3 episodes, seed 1, one fault in episode 1", nil,
			func(c config) bool {
				return c.episodes == 3 && c.seed == 1 && c.draw.FaultEpisode == 1 && slices.Equal(c.draw.Faults, FaultKinds())
			}, false},
		{"episodes set draw each episode's fault by chance", map[string]string{"SOAK_EPISODES": "100", "SOAK_SEED": "42", "SOAK_FAULT_CHANCE": "0.25"},
			func(c config) bool {
				return c.episodes == 100 && c.seed == 42 && c.draw.FaultEpisode == -1 && c.draw.FaultChance == 0.25
			}, false},
		{"a rerun names its first episode and its fault episode", map[string]string{"SOAK_EPISODES": "1", "SOAK_FIRST": "7", "SOAK_FAULT_EPISODE": "7", "SOAK_FAULTS": "none"},
			func(c config) bool { return c.first == 7 && c.draw.FaultEpisode == 7 && len(c.draw.Faults) == 0 }, false},
		{"the cap is read", map[string]string{"SOAK_CAP": "5m"}, func(c config) bool { return c.cap == 5*time.Minute }, false},
		{"zero episodes is an error", map[string]string{"SOAK_EPISODES": "0"}, nil, true},
		{"a cap below an episode's minimum is an error", map[string]string{"SOAK_CAP": "10s"}, nil, true},
		{"a chance above 1 is an error", map[string]string{"SOAK_FAULT_CHANCE": "2"}, nil, true},
		{"an unknown fault kind is an error", map[string]string{"SOAK_FAULTS": "kubelet-reboot"}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"SOAK_EPISODES", "SOAK_SEED", "SOAK_FIRST", "SOAK_FAULTS", "SOAK_FAULT_CHANCE", "SOAK_FAULT_EPISODE", "SOAK_CAP", "SOAK_OUT"} {
				t.Setenv(k, tc.env[k])
			}
			c, err := configFromEnv()
			if (err != nil) != tc.wantErr {
				t.Fatalf("configFromEnv() error %v, want error %v", err, tc.wantErr)
			}
			if err == nil && !tc.check(c) {
				t.Errorf("configFromEnv() = %+v", c)
			}
		})
	}
}

// TestRerunReproducesTheEpisodesDraw: the printed rerun command, read back as the environment make soak
// gives TestSoak, draws the same plan for the episode (the fault depends on the chance and the kinds).
func TestRerunReproducesTheEpisodesDraw(t *testing.T) {
	run := config{seed: 20261205, draw: DrawConfig{Faults: []FaultKind{FaultAPIServerStop, FaultAgentSIGKILL}, FaultEpisode: -1,
		FaultChance: 0.6, FaultWithin: 40 * time.Second}}
	cmd := run.rerun(50)
	env := map[string]string{}
	for _, f := range strings.Fields(cmd)[2:] {
		k, v, _ := strings.Cut(f, "=")
		env["SOAK_"+k] = v
	}
	for _, k := range []string{"SOAK_EPISODES", "SOAK_SEED", "SOAK_FIRST", "SOAK_FAULTS", "SOAK_FAULT_CHANCE", "SOAK_FAULT_EPISODE", "SOAK_CAP", "SOAK_OUT"} {
		t.Setenv(k, env[k])
	}
	again, err := configFromEnv()
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	again.draw.FaultWithin = run.draw.FaultWithin
	if a, b := Draw(run.seed, 50, run.draw), Draw(again.seed, again.first, again.draw); !reflect.DeepEqual(a, b) {
		t.Errorf("%s draws\n%+v\nwant\n%+v", cmd, b, a)
	}
	if again.first != 50 || again.episodes != 1 {
		t.Errorf("%s: first %d, episodes %d", cmd, again.first, again.episodes)
	}
}
