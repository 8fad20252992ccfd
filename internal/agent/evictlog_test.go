package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source"
)

func TestEvictLineSaysWhenTheSyncStartedReadDecidedAndRequestedOnTheAgentsClock(t *testing.T) {
	h := newHarness(t, nil)
	var logged bytes.Buffer
	h.agent.Log = slog.New(slog.NewJSONHandler(&logged, nil))
	scenario1(h, 1550*mi)
	h.agent.Source = slowSource{h.agent.Source, h.clock, 7 * time.Millisecond}
	h.sync(1500*time.Millisecond - 14*time.Millisecond)
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
	// The sync's phases, each on the same clock: the source below took 7 ms to read the pods and 7 ms
	// to read the node, so the read was done 14 ms after the sync started.
	started := t0.Add(1500*time.Millisecond - 14*time.Millisecond)
	for field, want := range map[string]time.Time{"sync_started_at": started, "read_done_at": want, "decided_at": want} {
		s, _ := lines[0][field].(string)
		got, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Errorf("%s %q: %v", field, s, err)
		} else if !got.Equal(want) {
			t.Errorf("%s: got %s, want %s", field, got, want)
		}
	}
	// The process's CPU time over the sync, from the kernel (this test process's, so any duration).
	if s, _ := lines[0]["sync_cpu"].(string); s == "" {
		t.Errorf("sync_cpu missing from the evict line")
	} else if total, _, _ := strings.Cut(s, " "); !regexp.MustCompile(`^\S+ \(read \S+, decide \S+; user \S+, sys \S+; \d+ GC\)$`).MatchString(s) {
		t.Errorf("sync_cpu %q, want \"TOTAL (read R, decide D; user U, sys S; N GC)\"", s)
	} else if d, err := time.ParseDuration(total); err != nil || d < 0 {
		t.Errorf("sync_cpu's total %q: %v, want a duration of at least 0", total, err)
	}
	if lines[0]["pod"] != "default/stress" {
		t.Errorf("evicted %v, want default/stress", lines[0]["pod"])
	}
}

// slowSource is a node reader whose every read takes step on the fake clock.
type slowSource struct {
	source.NodeReader
	clock *testingclock.FakeClock
	step  time.Duration
}

func (s slowSource) ReadNode(now time.Time) (signal.Snapshot, error) {
	s.clock.Step(s.step)
	return s.NodeReader.ReadNode(now)
}

func (s slowSource) ReadPods(snap *signal.Snapshot, now time.Time) error {
	s.clock.Step(s.step)
	return s.NodeReader.ReadPods(snap, now)
}

func TestThePollIsPausedFromASyncsStartToItsDecisionAndResumedBeforeTheEvictionRequest(t *testing.T) {
	h := newHarness(t, nil)
	scenario1(h, 1550*mi)
	var events []string
	deciding := false
	h.agent.Deciding = func(b bool) {
		deciding = b
		events = append(events, fmt.Sprintf("deciding=%t", b))
	}
	h.agent.Source = watchedSource{h.agent.Source, func(what string) { events = append(events, fmt.Sprintf("%s while deciding=%t", what, deciding)) }}
	h.agent.Ladder = watchedLadder{h.ladder, func() { events = append(events, fmt.Sprintf("eviction request while deciding=%t", deciding)) }}
	h.sync(1500 * time.Millisecond)
	// The deferred false at the sync's end is said again: harmless, the poll is already resumed.
	want := []string{"deciding=true", "read pods while deciding=true", "read node while deciding=true", "deciding=false",
		"eviction request while deciding=false", "deciding=false"}
	if got := strings.Join(events, "; "); got != strings.Join(want, "; ") {
		t.Errorf("got\n  %s\nwant\n  %s", got, strings.Join(want, "; "))
	}
}

// watchedSource tells seen about each read before it reads.
type watchedSource struct {
	source.NodeReader
	seen func(what string)
}

func (s watchedSource) ReadNode(now time.Time) (signal.Snapshot, error) {
	s.seen("read node")
	return s.NodeReader.ReadNode(now)
}

func (s watchedSource) ReadPods(snap *signal.Snapshot, now time.Time) error {
	s.seen("read pods")
	return s.NodeReader.ReadPods(snap, now)
}

// watchedLadder tells seen about each eviction request before it is made.
type watchedLadder struct {
	*recordingLadder
	seen func()
}

func (l watchedLadder) EvictThen(ctx context.Context, req actuate.Request, later func(actuate.Result, error)) (actuate.Result, error) {
	l.seen()
	return l.recordingLadder.EvictThen(ctx, req, later)
}

func (l watchedLadder) Evict(ctx context.Context, req actuate.Request) (actuate.Result, error) {
	l.seen()
	return l.recordingLadder.Evict(ctx, req)
}
