package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/janitor"
	"github.com/kube-pressure/pressure/internal/why"
)

// The verdict core cannot import the agent's and janitor's packages (client-go); its copies of their
// names must stay equal to theirs.
func TestWhyRecognisesTheNamesTheAgentAndJanitorWrite(t *testing.T) {
	for _, tc := range []struct{ name, got, want string }{
		{"agent component", why.ComponentAgent, actuate.Component},
		{"agent eviction reason", why.ReasonAgentEvicted, actuate.ReasonPressureEviction},
		{"janitor component", why.ComponentJanitor, janitor.Component},
		{"janitor evidence reason", why.ReasonJanitor, janitor.EventReason},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: why has %q, the component writes %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestWhyRejectsBadFlagsBeforeTouchingTheCluster(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown output format", []string{"why", "p", "-o", "xml"}, `--output "xml": must be text, json or yaml`},
		{"negative since", []string{"why", "p", "--since", "-1h"}, "--since -1h0m0s: must not be negative"},
		{"no pod", []string{"why"}, "accepts 1 arg(s), received 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runCLI(t, append([]string{"--kubeconfig", "/nonexistent"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestWhyJSONAndYAMLCarryTheSameVerdict(t *testing.T) {
	v := why.Decide(why.Evidence{Namespace: "ns", Query: "p", Checked: []string{"pod ns/p (GET)"}})
	for _, format := range []string{"json", "yaml"} {
		var out bytes.Buffer
		if err := renderWhy(genericiooptions.IOStreams{Out: &out}, v, format); err != nil {
			t.Fatal(err)
		}
		var got why.Verdict
		if err := yaml.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("%s: %v\n%s", format, err, out.String())
		}
		if got.Cause != why.CauseUnknown || got.Pod != "p" || len(got.Checked) != 1 {
			t.Errorf("%s round trip: %+v, want the unknown verdict of p with its checked list", format, got)
		}
	}
}

func TestWhySinceAndGonePodIdentity(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	old := why.Event{ObjectUID: "uid-old", Last: t0.Add(-3 * time.Hour)}
	newer := why.Event{ObjectUID: "uid-new", Last: t0.Add(-time.Minute)}
	for _, tc := range []struct {
		name  string
		e     why.Event
		since time.Time
		want  bool
	}{
		{"no --since keeps every event", old, time.Time{}, true},
		{"an event last seen before --since is dropped", old, t0.Add(-2 * time.Hour), false},
		{"an event last seen after --since is kept", newer, t0.Add(-2 * time.Hour), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := recent(tc.e, tc.since); got != tc.want {
				t.Errorf("recent = %v, want %v", got, tc.want)
			}
		})
	}
	if got := uidFromEvents([]why.Event{old, newer}); got != "uid-new" {
		t.Errorf("a gone pod's UID from its events: %q, want the newest event's uid-new", got)
	}
}
