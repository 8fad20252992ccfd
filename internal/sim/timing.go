package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Timing holds the time constants of the model. DefaultTiming gives the kubelet's.
type Timing struct {
	// Step is the resolution at which the world is sampled: notifier crossings, the agent's poll,
	// threshold crossings and the plot.
	Step time.Duration `json:"step"`
	// Housekeeping is the kubelet's eviction monitoring interval (evictionMonitoringPeriod, 10 s):
	// the pause after a sync that evicted nothing.
	Housekeeping time.Duration `json:"housekeeping"`
	// FirstSync is the kubelet's first sync after the start of the timeline: the phase of its loop.
	FirstSync time.Duration `json:"firstSync"`
	// SyncDuration is how long a sync of the kubelet takes before it decides (reading the summary, which
	// makes cAdvisor measure the node): the loop's period is Housekeeping + SyncDuration.
	SyncDuration time.Duration `json:"syncDuration"`
	// CleanupPoll and CleanupTimeout are waitForPodsCleanup's ticker (1 s) and timeout (30 s): after
	// a sync that evicted, the kubelet checks every CleanupPoll whether the pod's resources are
	// reclaimed and syncs again at once when they are.
	CleanupPoll    time.Duration `json:"cleanupPoll"`
	CleanupTimeout time.Duration `json:"cleanupTimeout"`
	// PodKill is how long the kubelet's kill takes, from its eviction decision until the pod is stopped
	// and its memory free; the sync returns then (killPodNow blocks it) and the cleanup wait starts.
	PodKill time.Duration `json:"podKill"`
	// PodCleanup is from the end of the kill until the pod's resources are reclaimed (containers
	// removed, cgroup gone), which ends the cleanup wait at the next CleanupPoll tick.
	PodCleanup time.Duration `json:"podCleanup"`
	// NodeStatusUpdate is the kubelet's nodeStatusUpdateFrequency: its conditions reach the Node
	// object, and the node lifecycle controller's taint follows, at these ticks.
	NodeStatusUpdate time.Duration `json:"nodeStatusUpdate"`
	// NotifierRefresh is how often at most the kubelet re-arms its memcg notifiers (10 s).
	NotifierRefresh time.Duration `json:"notifierRefresh"`
	// AgentEviction is from the agent's eviction request until the pod's memory is free (API round
	// trip, the pod's grace period, the kill).
	AgentEviction time.Duration `json:"agentEviction"`
	// AgentRequest is how long the agent's shell takes to carry out one planned eviction before the next
	// (the Eviction API's answer, the ledger's write, the Events): a plan's evictions follow one another
	// and the agent does not sync again until the last is done (0: at once). A recording's pressure-agent
	// evictions made in one plan say what it was (Recording.AgentRequest).
	AgentRequest time.Duration `json:"agentRequest"`
	// AgentPhase delays the agent's first periodic sync and first poll after the start of the timeline:
	// the phase of its sync period and of its poll's reads, which a recording does not show (the agent
	// logs no sync that decides nothing). Its reads then fall at other samples of the recording.
	AgentPhase time.Duration `json:"agentPhase"`
}

// DefaultTiming returns the kubelet v1.37 constants and the delays seen on the e2e node (PodKill,
// PodCleanup; docs/simulate.md); AgentEviction is an estimate.
func DefaultTiming() Timing {
	return Timing{
		Step:             100 * time.Millisecond,
		Housekeeping:     10 * time.Second,
		CleanupPoll:      time.Second,
		CleanupTimeout:   30 * time.Second,
		PodKill:          300 * time.Millisecond,
		PodCleanup:       500 * time.Millisecond,
		NodeStatusUpdate: 10 * time.Second,
		NotifierRefresh:  10 * time.Second,
		AgentEviction:    time.Second,
	}
}

// AgentTiming is how the agent's shell wakes up: a periodic sync and a poll of the memory signals
// that wakes it on a crossing of its thresholds or a change of more than PollDelta bytes.
type AgentTiming struct {
	SyncPeriod   time.Duration `json:"syncPeriod"`
	PollInterval time.Duration `json:"pollInterval"`
	PollDelta    int64         `json:"pollDelta"`
	// PollMaxInterval and PollRampRate make the poll adaptive, as the agent's (policy.NextPoll);
	// zero: a poll every PollInterval.
	PollMaxInterval time.Duration `json:"pollMaxInterval,omitempty"`
	PollRampRate    int64         `json:"pollRampRate,omitempty"`
}

// MaxTicks bounds the world samples of one run (the timeline's length over Timing.Step).
const MaxTicks = 2_000_000

// Validate reports every duration out of its range, each naming the field: Step at least 10ms, the
// intervals at least Step, the delays not negative, and at most MaxTicks steps in span.
func (t Timing) Validate(span time.Duration) error {
	var errs []error
	check := func(ok bool, field string, v time.Duration, why string) {
		if !ok {
			errs = append(errs, fmt.Errorf("timing.%s %s: %s", field, v, why))
		}
	}
	check(t.Step >= 10*time.Millisecond, "step", t.Step, "at least 10ms")
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"housekeeping", t.Housekeeping}, {"cleanupPoll", t.CleanupPoll}, {"notifierRefresh", t.NotifierRefresh}} {
		check(f.v >= t.Step, f.name, f.v, "at least timing.step "+t.Step.String())
	}
	check(t.NodeStatusUpdate == 0 || t.NodeStatusUpdate >= t.Step, "nodeStatusUpdate", t.NodeStatusUpdate, "0 or at least timing.step")
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"firstSync", t.FirstSync}, {"syncDuration", t.SyncDuration}, {"cleanupTimeout", t.CleanupTimeout}, {"podKill", t.PodKill},
		{"podCleanup", t.PodCleanup}, {"agentEviction", t.AgentEviction}, {"agentRequest", t.AgentRequest},
		{"agentPhase", t.AgentPhase}} {
		check(f.v >= 0, f.name, f.v, "must not be negative")
	}
	if t.Step > 0 && span/t.Step > MaxTicks {
		errs = append(errs, fmt.Errorf("timing.step %s: %d steps in %s, at most %d", t.Step, span/t.Step, span, MaxTicks))
	}
	return errors.Join(errs...)
}

// MarshalJSON writes every duration as a Go duration string ("10s").
func (t Timing) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"step": t.Step.String(), "housekeeping": t.Housekeeping.String(),
		"firstSync": t.FirstSync.String(), "syncDuration": t.SyncDuration.String(), "cleanupPoll": t.CleanupPoll.String(), "cleanupTimeout": t.CleanupTimeout.String(),
		"podKill": t.PodKill.String(), "podCleanup": t.PodCleanup.String(), "nodeStatusUpdate": t.NodeStatusUpdate.String(),
		"notifierRefresh": t.NotifierRefresh.String(), "agentEviction": t.AgentEviction.String(),
		"agentRequest": t.AgentRequest.String(), "agentPhase": t.AgentPhase.String()})
}
