package evictaudit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// A captured shape of kube-apiserver's audit log (v1.36, level Metadata): two requests for the same
// pod are two records, a line of another subresource is skipped.
const captured = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"RequestReceived","auditID":"a1","verb":"create","objectRef":{"resource":"pods","namespace":"disk","name":"writer","apiVersion":"v1","subresource":"eviction"},"user":{"username":"system:serviceaccount:pressure:pressure-agent"},"requestReceivedTimestamp":"2026-12-03T17:00:00.100000Z","stageTimestamp":"2026-12-03T17:00:00.100000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"RequestReceived","auditID":"x","verb":"create","objectRef":{"resource":"pods","namespace":"disk","name":"other"},"requestReceivedTimestamp":"2026-12-03T17:00:00.150000Z","stageTimestamp":"2026-12-03T17:00:00.150000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","auditID":"a1","verb":"create","objectRef":{"resource":"pods","namespace":"disk","name":"writer","apiVersion":"v1","subresource":"eviction"},"user":{"username":"system:serviceaccount:pressure:pressure-agent"},"responseStatus":{"metadata":{},"code":201},"requestReceivedTimestamp":"2026-12-03T17:00:00.100000Z","stageTimestamp":"2026-12-03T17:00:00.142000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"RequestReceived","auditID":"a2","verb":"create","objectRef":{"resource":"pods","namespace":"disk","name":"writer","subresource":"eviction"},"requestReceivedTimestamp":"2026-12-03T17:00:01Z","stageTimestamp":"2026-12-03T17:00:01Z"}
`

func TestParseCountsEveryRequestIncludingARepeat(t *testing.T) {
	got, err := Parse(strings.NewReader(captured))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 3, 17, 0, 0, 100e6, time.UTC)
	want := []Request{
		{AuditID: "a1", Namespace: "disk", Pod: "writer", User: "system:serviceaccount:pressure:pressure-agent", Received: t0,
			Completed: t0.Add(42 * time.Millisecond), Code: 201},
		{AuditID: "a2", Namespace: "disk", Pod: "writer", Received: time.Date(2026, 12, 3, 17, 0, 1, 0, time.UTC)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", got, want)
	}
	if p := Pods(In(got, "disk")); !reflect.DeepEqual(p, []string{"writer", "writer"}) {
		t.Errorf("Pods(In(disk)) = %v, want the writer twice", p)
	}
	if s := got[0].String() + ", " + got[1].String(); s != "writer (201), writer (unanswered)" {
		t.Errorf("String = %q", s)
	}
	if n := len(In(got, "elsewhere")); n != 0 {
		t.Errorf("In(elsewhere) has %d requests", n)
	}
}

func TestReadNamesTheFileAndTheBadLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(p, []byte("{}\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Read(p)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("Read: %v, want an error naming %s and line 2", err, p)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("Read of a missing file succeeded")
	}
}

func TestArgsWritesThePolicyAndNamesTheLog(t *testing.T) {
	dir := t.TempDir()
	args, log, err := Args(dir)
	if err != nil {
		t.Fatal(err)
	}
	if log != filepath.Join(dir, "audit.log") || !strings.Contains(strings.Join(args, " "), "--audit-log-path="+log) {
		t.Errorf("args %v, log %s", args, log)
	}
	b, err := os.ReadFile(filepath.Join(dir, "audit-policy.yaml"))
	if err != nil || !strings.Contains(string(b), "pods/eviction") {
		t.Errorf("policy %q, %v", b, err)
	}
}

// FuzzParse: for any pod, namespace, ID and code, the RequestReceived and ResponseComplete lines the
// API server would write parse back to that one request, whatever other line (another subresource)
// sits between them (testdata/fuzz: a name that is not valid UTF-8 is out of the property's domain); and any input either parses or errors, without panicking.
func FuzzParse(f *testing.F) {
	f.Add("disk", "writer", "a1", int32(201), "{}")
	f.Add("", "", "", int32(0), "not json")
	f.Fuzz(func(t *testing.T, ns, pod, id string, code int32, noise string) {
		_, _ = Parse(strings.NewReader(noise))
		if !utf8.ValidString(ns) || !utf8.ValidString(pod) || !utf8.ValidString(id) {
			return // the API server writes names and IDs as valid UTF-8; JSON would replace the bad bytes
		}
		t0 := time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC)
		line := func(stage string, at time.Time, c int32) string {
			ev := map[string]any{"stage": stage, "auditID": id, "requestReceivedTimestamp": t0, "stageTimestamp": at,
				"objectRef": map[string]string{"namespace": ns, "name": pod, "subresource": "eviction"}}
			if c != 0 {
				ev["responseStatus"] = map[string]int32{"code": c}
			}
			b, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		other := `{"stage":"RequestReceived","auditID":"other","objectRef":{"namespace":"x","name":"y","subresource":"status"}}`
		log := line("RequestReceived", t0, 0) + "\n" + other + "\n" + line("ResponseComplete", t0.Add(time.Second), code) + "\n"
		got, err := Parse(strings.NewReader(log))
		if err != nil {
			t.Fatalf("Parse(%q): %v", log, err)
		}
		want := []Request{{AuditID: id, Namespace: ns, Pod: pod, Received: t0, Completed: t0.Add(time.Second), Code: code}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%q) = %+v, want %+v", log, got, want)
		}
	})
}
