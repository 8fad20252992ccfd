package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"
)

func TestEvictLineSaysWhenTheRequestWasStartedOnTheAgentsClock(t *testing.T) {
	h := newHarness(t, nil)
	var logged bytes.Buffer
	h.agent.Log = slog.New(slog.NewJSONHandler(&logged, nil))
	scenario1(h, 1550*mi)
	h.sync(1500 * time.Millisecond)
	want := t0.Add(1500 * time.Millisecond)
	var lines []map[string]any
	sc := bufio.NewScanner(&logged)
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if l["msg"] == "evict" {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("evict lines: got %d, want 1:\n%s", len(lines), logged.String())
	}
	got, err := time.Parse(time.RFC3339Nano, lines[0]["requested_at"].(string))
	if err != nil {
		t.Fatalf("requested_at %v: %v", lines[0]["requested_at"], err)
	}
	if !got.Equal(want) {
		t.Errorf("requested_at: got %s, want the clock's %s", got, want)
	}
	if lines[0]["pod"] != "default/stress" {
		t.Errorf("evicted %v, want default/stress", lines[0]["pod"])
	}
}
