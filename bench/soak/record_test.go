package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kube-pressure/pressure/internal/cli"
	agentcfg "github.com/kube-pressure/pressure/internal/config/agent"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/why"
)

// kubectlPressure runs kubectl-pressure in process (as test/e2e does) and returns its stdout.
func (c *soakCluster) kubectlPressure(ctx context.Context, args ...string) (string, error) {
	return runPressureCLI(ctx, append([]string{"--kubeconfig", c.cp.Kubeconfig()}, args...)...)
}

// runPressureCLI runs kubectl-pressure with args in process and returns its stdout.
func runPressureCLI(ctx context.Context, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr}
	if err := cli.Run(ctx, streams, args); err != nil {
		return stdout.String(), fmt.Errorf("kubectl pressure %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// record starts `kubectl pressure record NODE --every 1s --local --local-every 25ms --out dir` in the
// background: the driver runs on the node as root, so the recording also holds the agent's own view
// (the pods' cgroups read as pressure-agent reads them, as often as its poll near a threshold), which
// simulate's agent run reads (invariant 2). The returned function stops it as Ctrl-C does (what was
// recorded is kept) and returns its error.
func (c *soakCluster) record(ctx context.Context, dir string, max time.Duration) func() error {
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.kubectlPressure(rctx, "record", c.node.Name(), "--every", "1s", "--local", "--local-every", localEvery.String(),
			"--for", max.String(), "--out", dir)
		done <- err
	}()
	return func() error {
		stop()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			return fmt.Errorf("kubectl pressure record %s did not stop within 30 s", dir)
		}
	}
}

// localEvery is the interval of the recording's local reads of the node's cgroups: the agent's fastest
// poll (agent.config notifiers.pollInterval, 25ms by default). At 100ms, the old floor, the recording
// missed what the agent's 25ms reads saw: an unpaced hog's 1.5Gi/s burst that raised the eviction lead
// (episode 76 of the fourth run), so simulate named other victims. (Episode 86, first blamed on the same,
// was the driver's: the agent evicted after the recording stopped; see Plan.MinDuration.)
const localEvery = agentcfg.DefaultPollInterval

// simulation is the part of `simulate -o json` the soak reads.
type simulation struct {
	Runs []struct {
		Name   string `json:"name"`
		Events []struct {
			Actor   string `json:"actor"`
			Kind    string `json:"kind"`
			Subject string `json:"subject"`
		} `json:"events"`
	} `json:"runs"`
}

// predictAgent runs `kubectl pressure simulate dir -o json` (the agent's default configuration, which
// the chart's default agent.config leaves as it is) in process and returns the pods its agent run has
// pressure-agent evict, namespace/pod. A recording needs no cluster, so TestRejudge calls it too.
func predictAgent(ctx context.Context, dir string, args ...string) ([]string, error) {
	out, err := runPressureCLI(ctx, append([]string{"simulate", dir, "-o", "json"}, args...)...)
	if err != nil {
		return nil, err
	}
	pods, err := agentEvictions([]byte(out))
	if err != nil {
		return nil, fmt.Errorf("simulate %s -o json: %w", dir, err)
	}
	return pods, nil
}

// predictNear runs predictAgent with each setting of Tolerance (around the agent's default lead and poll,
// which the chart leaves as they are) and returns the victims by --set value.
func predictNear(ctx context.Context, dir string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, set := range Tolerance(policy.DefaultEvictionLead, agentcfg.DefaultPollMaxInterval) {
		pods, err := predictAgent(ctx, dir, "--set", set)
		if err != nil {
			return nil, err
		}
		out[set] = pods
	}
	return out, nil
}

// agentEvictions returns the pods simulate's JSON has pressure-agent evict in its agent run.
func agentEvictions(out []byte) ([]string, error) {
	var s simulation
	if err := json.Unmarshal(out, &s); err != nil {
		return nil, err
	}
	var pods []string
	for _, r := range s.Runs {
		if r.Name != "agent" {
			continue
		}
		for _, ev := range r.Events {
			if ev.Kind == "evict" && ev.Actor == "pressure-agent" {
				pods = append(pods, ev.Subject)
			}
		}
	}
	return pods, nil
}

// why runs `kubectl pressure why -o json` on each evicted pod.
func (c *soakCluster) why(ctx context.Context, evs []Eviction) map[string]string {
	out := map[string]string{}
	for _, e := range evs {
		k := e.Namespace + "/" + e.Pod
		if _, done := out[k]; done {
			continue
		}
		text, err := c.kubectlPressure(ctx, "why", e.Pod, "-n", e.Namespace, "-o", "json")
		var v why.Verdict
		switch {
		case err != nil:
			out[k] = "error: " + err.Error()
		case json.Unmarshal([]byte(text), &v) != nil:
			out[k] = "not JSON: " + text
		default:
			out[k] = string(v.Cause)
		}
	}
	return out
}
