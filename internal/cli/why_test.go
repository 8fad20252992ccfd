package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/evidence"
	"github.com/kube-pressure/pressure/internal/why"
)

// The verdict core cannot import the agent's package (client-go); its copies of its names must stay
// equal to the agent's. (The janitor's names it takes from internal/evidence.)
func TestWhyRecognisesTheNamesTheAgentWrites(t *testing.T) {
	for _, tc := range []struct{ name, got, want string }{
		{"agent component", why.ComponentAgent, actuate.Component},
		{"agent eviction reason", why.ReasonAgentEvicted, actuate.ReasonPressureEviction},
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
		{"unknown output format", []string{"why", "p", "-o", "xml"}, `--output "xml": unknown format; want one of text, wide, json, yaml,`},
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

// Issue 30, finding 4: the janitor's evidence is verified only as the janitor writes it (its name
// prefix and source, which the chart's pressure-janitor-evidence policy leaves to the janitor alone);
// an EvictedPodDeleted Event anyone else wrote is shown as unverified.
func TestJanitorEvidenceIsVerifiedOnlyWhenWrittenAsTheJanitor(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	w := evidence.NewWindow("shop", evidence.Owner{Kind: "Deployment", Name: "web", UID: "d-1"}, now)
	w.Add(evidence.Record{Pod: "web-a", Namespace: "shop", UID: "u-a", Reason: "Evicted"}, now)
	raw, err := w.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// As internal/janitor writes it (its own test checks that evidence.Verified holds for its Events).
	real := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: w.Name(),
		Annotations: map[string]string{evidence.Annotation: raw}}, Source: corev1.EventSource{Component: evidence.Component}}
	for _, tc := range []struct {
		name   string
		change func(e *corev1.Event)
		want   bool
	}{
		{"as the janitor writes it", func(*corev1.Event) {}, true},
		{"another source", func(e *corev1.Event) { e.Source.Component = "kubelet" }, false},
		{"no source", func(e *corev1.Event) { e.Source = corev1.EventSource{} }, false},
		{"another name", func(e *corev1.Event) { e.Name = "web.17a" }, false},
		{"another reporting controller", func(e *corev1.Event) { e.ReportingController = "someone" }, false},
		{"the janitor as reporting controller", func(e *corev1.Event) { e.ReportingController = evidence.Component }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := real.DeepCopy()
			tc.change(e)
			recs, err := janitorRecords(e)
			if err != nil || len(recs) != 1 {
				t.Fatalf("records %v err %v, want one", recs, err)
			}
			if recs[0].Event != "shop/"+e.Name {
				t.Errorf("record names Event %q, want shop/%s", recs[0].Event, e.Name)
			}
			if recs[0].Verified != tc.want {
				t.Errorf("verified %v, want %v (source %q)", recs[0].Verified, tc.want, recs[0].Source)
			}
		})
	}
}
