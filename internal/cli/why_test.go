package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// The janitor writes one Event per owner and window holding several pods' records; why must find
// each pod in it, and still read the single record older janitors wrote.
func TestJanitorEvidenceOfAWindowNamesEveryPodInIt(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	w := janitor.NewWindow("shop", janitor.OwnerRef{Kind: "Deployment", Name: "web", UID: "d-1"}, now)
	w.Add(janitor.Record{Pod: "web-a", Namespace: "shop", UID: "u-a", Reason: "Evicted"}, now)
	w.Add(janitor.Record{Pod: "web-b", Namespace: "shop", UID: "u-b", Reason: "Evicted"}, now.Add(time.Second))
	raw, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	single, err := json.Marshal(janitor.Record{Pod: "solo", Namespace: "shop", UID: "u-s", Reason: "Evicted"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, annotation string
		wantPods         []string
	}{
		{"window of two pods of a Deployment", string(raw), []string{"web-a", "web-b"}},
		{"single record of an older janitor", string(single), []string{"solo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pressure-janitor.d-1.1",
				Annotations: map[string]string{janitor.AnnotationEvidence: tc.annotation}}}
			recs, err := janitorRecords(ev)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, r.Pod)
				if r.Event != "shop/pressure-janitor.d-1.1" {
					t.Errorf("record %s names Event %q", r.Pod, r.Event)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.wantPods, ",") {
				t.Errorf("janitorRecords = %v, want %v", got, tc.wantPods)
			}
		})
	}
}

// Issue 30, finding 4: the janitor's evidence is verified only as the janitor writes it (its name
// prefix and source, which the chart's pressure-janitor-evidence policy leaves to the janitor alone);
// an EvictedPodDeleted Event anyone else wrote is shown as unverified.
func TestJanitorEvidenceIsVerifiedOnlyWhenWrittenAsTheJanitor(t *testing.T) {
	w := janitor.NewWindow("shop", janitor.OwnerRef{Kind: "Deployment", Name: "web", UID: "d-1"}, time.Now())
	w.Add(janitor.Record{Pod: "web-a", Namespace: "shop", UID: "u-a", Reason: "Evicted"}, time.Now())
	real, err := w.Event()
	if err != nil {
		t.Fatal(err)
	}
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
		{"the janitor as reporting controller", func(e *corev1.Event) { e.ReportingController = janitor.Component }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := real.DeepCopy()
			tc.change(e)
			recs, err := janitorRecords(e)
			if err != nil || len(recs) != 1 {
				t.Fatalf("records %v err %v, want one", recs, err)
			}
			if recs[0].Verified != tc.want {
				t.Errorf("verified %v, want %v (source %q)", recs[0].Verified, tc.want, recs[0].Source)
			}
		})
	}
}
