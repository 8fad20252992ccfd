package soak

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// config is the run TestSoak makes, from the environment (the make soak variables):
//
//	SOAK_EPISODES  episodes (unset: the short version, 3 episodes with one fault, in episode 1)
//	SOAK_SEED      seed (default 1)
//	SOAK_FIRST     first episode number (default 0): SOAK_FIRST=e SOAK_EPISODES=1 reruns episode e alone
//	SOAK_FAULTS    fault kinds to draw from: all (default), none, or a list (ParseFaults)
//	SOAK_FAULT_CHANCE  probability of a fault per episode in a long run (default 0.5)
//	SOAK_FAULT_EPISODE the only episode with a fault (the short version's 1; set: -1, by the chance)
//	SOAK_CAP       an episode's cap (default 150s)
//	SOAK_OUT       output directory (default: a new pressure-soak-SEED-* under the temp dir)
type config struct {
	episodes, first int
	seed            uint64
	draw            DrawConfig
	cap             time.Duration
	out             string
}

func configFromEnv() (config, error) {
	c := config{episodes: 3, seed: 1, cap: 150 * time.Second,
		draw: DrawConfig{FaultEpisode: 1, FaultChance: 0.5, FaultWithin: 40 * time.Second}}
	var err error
	if v := os.Getenv("SOAK_EPISODES"); v != "" {
		if c.episodes, err = strconv.Atoi(v); err != nil || c.episodes < 1 {
			return c, fmt.Errorf("SOAK_EPISODES %q: want a positive number", v)
		}
		c.draw.FaultEpisode = -1
	}
	if v := os.Getenv("SOAK_SEED"); v != "" {
		if c.seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			return c, fmt.Errorf("SOAK_SEED %q: %w", v, err)
		}
	}
	if v := os.Getenv("SOAK_FIRST"); v != "" {
		if c.first, err = strconv.Atoi(v); err != nil || c.first < 0 {
			return c, fmt.Errorf("SOAK_FIRST %q: want a number >= 0", v)
		}
	}
	if v := os.Getenv("SOAK_FAULT_EPISODE"); v != "" {
		if c.draw.FaultEpisode, err = strconv.Atoi(v); err != nil || c.draw.FaultEpisode < -1 {
			return c, fmt.Errorf("SOAK_FAULT_EPISODE %q: want an episode number, or -1 (each episode by SOAK_FAULT_CHANCE)", v)
		}
	}
	if c.draw.Faults, err = ParseFaults(os.Getenv("SOAK_FAULTS")); err != nil {
		return c, err
	}
	if v := os.Getenv("SOAK_FAULT_CHANCE"); v != "" {
		if c.draw.FaultChance, err = strconv.ParseFloat(v, 64); err != nil || c.draw.FaultChance < 0 || c.draw.FaultChance > 1 {
			return c, fmt.Errorf("SOAK_FAULT_CHANCE %q: want a number in [0, 1]", v)
		}
	}
	if v := os.Getenv("SOAK_CAP"); v != "" {
		if c.cap, err = time.ParseDuration(v); err != nil || c.cap < minEpisode {
			return c, fmt.Errorf("SOAK_CAP %q: want a duration of at least %s", v, minEpisode)
		}
	}
	c.out = os.Getenv("SOAK_OUT")
	return c, nil
}

// TestSoak runs the soak (see config): by default the short version `make test` runs, 3 episodes and
// one fault. Each episode's invariants are checked after it; the resources and restarts over the run
// at the end. A failing episode names its seed and episode and keeps its artefacts.
func TestSoak(t *testing.T) {
	cfg, err := configFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if p := clustertest.NodeProblem(); p != "" {
		clustertest.SkipOrFail(t, "level-2 node unavailable: %s", p)
	}
	out, err := outDir(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c := startCluster(t, out)
	t.Logf("cluster and chart ready in %s (chart values: defaults and --set %v); artefacts in %s", time.Since(start).Round(time.Second), c.values, out)
	// An interrupt (Ctrl-C on make soak) ends the run after the current step: the report is written and
	// the cluster stopped by the cleanups.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	s := newSampler(c)
	sampled := make(chan struct{})
	go func() { defer close(sampled); s.run(ctx) }()
	rep := &report{cfg: cfg, out: out, started: time.Now()}
	seen := map[string]bool{}
	for e := cfg.first; e < cfg.first+cfg.episodes && ctx.Err() == nil; e++ {
		p := Draw(cfg.seed, e, cfg.draw)
		r, err := c.episode(ctx, s, p, cfg.cap, seen, filepath.Join(out, fmt.Sprintf("episode-%d", e)))
		rep.add(t, r, err)
		if err != nil && ctx.Err() == nil {
			// The run stops, but its report is still written: the episodes so far and the resources.
			t.Errorf("episode %d of seed %d: %v (rerun alone: %s); the run stops here", e, cfg.seed, err, cfg.rerun(e))
			break
		}
	}
	if ctx.Err() != nil {
		t.Errorf("interrupted after %d episodes: the report covers those", len(rep.results))
	}
	cancel()
	<-sampled
	series, pods, _ := s.snapshot()
	evid, err := c.evidenceEvents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rep.finish(t, series, pods, evid, s.ledgerSamples())
	t.Logf("%d episodes in %s; report %s", len(rep.results), time.Since(rep.started).Round(time.Second), rep.path())
	if !rep.failed && !t.Failed() && cfg.out == "" {
		_ = os.RemoveAll(out) // the short version's artefacts: the summary is in the log above
	}
}

// rerun is the command that reruns episode e of the run alone.
func (c config) rerun(e int) string {
	faults := "none"
	if len(c.draw.Faults) > 0 {
		kinds := make([]string, len(c.draw.Faults))
		for i, k := range c.draw.Faults {
			kinds[i] = string(k)
		}
		faults = strings.Join(kinds, ",")
	}
	// The fault of an episode is drawn from the kinds and the chance: both are part of the command.
	return fmt.Sprintf("make soak SEED=%d FIRST=%d EPISODES=1 FAULT_EPISODE=%d FAULT_CHANCE=%g FAULTS=%s", c.seed, e,
		c.draw.FaultEpisode, c.draw.FaultChance, faults)
}
