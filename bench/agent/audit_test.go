package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseAuditTakesEachPodsFirstEvictionRequest(t *testing.T) {
	log := `{"kind":"Event","stage":"RequestReceived","auditID":"a1","objectRef":{"resource":"pods","namespace":"bench","name":"stress-a","subresource":"eviction"},"user":{"username":"system:serviceaccount:pressure-system:pressure-agent"},"requestReceivedTimestamp":"2026-12-03T17:00:00.100000Z","stageTimestamp":"2026-12-03T17:00:00.100000Z"}
{"kind":"Event","stage":"RequestReceived","auditID":"x","objectRef":{"resource":"pods","namespace":"bench","name":"other"},"requestReceivedTimestamp":"2026-12-03T17:00:00.150000Z","stageTimestamp":"2026-12-03T17:00:00.150000Z"}
{"kind":"Event","stage":"ResponseComplete","auditID":"a1","objectRef":{"resource":"pods","namespace":"bench","name":"stress-a","subresource":"eviction"},"user":{"username":"system:serviceaccount:pressure-system:pressure-agent"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-03T17:00:00.100000Z","stageTimestamp":"2026-12-03T17:00:00.142000Z"}
{"kind":"Event","stage":"RequestReceived","auditID":"a2","objectRef":{"resource":"pods","namespace":"bench","name":"stress-a","subresource":"eviction"},"requestReceivedTimestamp":"2026-12-03T17:00:01Z","stageTimestamp":"2026-12-03T17:00:01Z"}
{"kind":"Event","stage":"ResponseComplete","auditID":"a2","objectRef":{"resource":"pods","namespace":"bench","name":"stress-a","subresource":"eviction"},"responseStatus":{"code":429},"requestReceivedTimestamp":"2026-12-03T17:00:01Z","stageTimestamp":"2026-12-03T17:00:01.1Z"}
`
	got, err := parseAudit(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	e, ok := got["bench/stress-a"]
	if len(got) != 1 || !ok {
		t.Fatalf("parseAudit = %v, want only bench/stress-a", got)
	}
	t0 := time.Date(2026, 12, 3, 17, 0, 0, 100e6, time.UTC)
	if !e.received.Equal(t0) || !e.completed.Equal(t0.Add(42*time.Millisecond)) || e.code != 201 {
		t.Errorf("stress-a = %+v, want received %s, completed 42ms later, code 201 (the first request, not the retry)", e, t0)
	}
}

func TestParseAuditNamesTheBadLine(t *testing.T) {
	_, err := parseAudit(strings.NewReader("{}\nnot json\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("err = %v, want one naming line 2", err)
	}
}

func FuzzParseAudit(f *testing.F) {
	f.Add(`{"stage":"RequestReceived","auditID":"a","objectRef":{"namespace":"n","name":"p","subresource":"eviction"}}`)
	f.Add("{}\n{")
	f.Add("{\"objectRef\":{\"namespace\":\"n\",\"name\":\"p\",\"subresource\":\"eviction\"}}\r\n{\"objectRef\":{\"name\":\"q\"}}\n")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseAudit(strings.NewReader(s))
		// The reference: decode each line alone; the pods are those of the eviction lines.
		lines := strings.Split(s, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		want := map[string]bool{}
		var werr error
		for i, l := range lines {
			if len(l) >= 4<<20-1 {
				return // longer than the scanner's buffer; an error either way
			}
			var ev auditEvent
			if werr = json.Unmarshal([]byte(strings.TrimSuffix(l, "\r")), &ev); werr != nil {
				werr = fmt.Errorf("line %d: %w", i+1, werr)
				break
			}
			if ev.ObjectRef != nil && ev.ObjectRef.Subresource == "eviction" {
				want[ev.ObjectRef.Namespace+"/"+ev.ObjectRef.Name] = true
			}
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("parseAudit(%q) error = %v; decoding line by line: %v", s, err, werr)
		}
		if err != nil {
			if got != nil || !strings.Contains(err.Error(), "audit log "+strings.SplitN(werr.Error(), ":", 2)[0]) {
				t.Errorf("parseAudit(%q) = %v, %v; want no pods and an error naming the %s", s, got, err, strings.SplitN(werr.Error(), ":", 2)[0])
			}
			return
		}
		gotPods := map[string]bool{}
		for pod := range got {
			gotPods[pod] = true
		}
		if diff := cmp.Diff(gotPods, want); diff != "" {
			t.Errorf("parseAudit(%q) pods (-got +want):\n%s", s, diff)
		}
	})
}
