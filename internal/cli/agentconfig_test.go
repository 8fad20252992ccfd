package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeAgentConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: pressure.kube-pressure.io/v1alpha1\nkind: AgentConfiguration\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// agentSection is the part of the JSON report's pressure section the tests read.
type agentSection struct {
	Pressure struct {
		Settings   string
		Policy     string
		Thresholds []struct{ Kubelet, Headroom, Resolved, KubeletResolved string }
		Victims    []struct{ Pod string }
	}
}

func TestExplainPredictsTheAgentWithTheSettingsOfAgentConfig(t *testing.T) {
	seed := filepath.Join("testdata", "snapshots", "seed")
	for _, tc := range []struct {
		name, body   string
		policy       string
		headroom     string // of memory.available
		resolved     string // memory.available, bytes
		wantSettings func(path string) string
	}{
		{"defaults without the flag", "", "pressure", "256Mi", "373293056", func(string) string {
			return "pressure-agent's defaults (no --agent-config given)"
		}},
		{"the file's headroom", "headroom:\n  memory.available: 1Gi\n", "pressure", "1Gi", "1178599424", func(p string) string {
			return "--agent-config " + p
		}},
		{"the file's policy kubelet", "policy: kubelet\n", "kubelet", "", "104857600", func(p string) string {
			return "--agent-config " + p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"explain", "--snapshot", seed, "-o", "json"}
			path := ""
			if tc.body != "" {
				path = writeAgentConfig(t, tc.body)
				args = append(args, "--agent-config", path)
			}
			out, err := runCLI(t, args...)
			if err != nil {
				t.Fatalf("explain: %v", err)
			}
			var r agentSection
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			got := []string{r.Pressure.Settings, r.Pressure.Policy}
			for _, th := range r.Pressure.Thresholds {
				if th.Kubelet == "memory.available<100Mi" {
					got = append(got, th.Headroom, th.Resolved)
				}
			}
			if d := cmp.Diff(got, []string{tc.wantSettings(path), tc.policy, tc.headroom, tc.resolved}); d != "" {
				t.Errorf("settings, policy, memory.available headroom and threshold (-got +want):\n%s", d)
			}
		})
	}
}

func TestExplainRejectsABadAgentConfigNamingFileFieldAndValue(t *testing.T) {
	path := writeAgentConfig(t, "maxEvictionsPerMinute: 0\nheadroom:\n  memory.available: lots\n")
	_, err := runCLI(t, "explain", "--snapshot", filepath.Join("testdata", "snapshots", "seed"), "--agent-config", path)
	if err == nil {
		t.Fatal("explain accepted a bad agent configuration")
	}
	for _, want := range []string{path, "maxEvictionsPerMinute", `"0"`, "headroom.memory.available", `"lots"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if _, err := runCLI(t, "explain", "--snapshot", filepath.Join("testdata", "snapshots", "seed"), "--agent-config", path+".missing"); err == nil ||
		!strings.Contains(err.Error(), path+".missing") {
		t.Errorf("missing file: error %v, want one naming the file", err)
	}
}
