package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func TestNextChunk(t *testing.T) {
	for _, tc := range []struct {
		name               string
		done, step, target int64
		want               int64
	}{
		{"full step while far from target", 0, 4, 10, 4},
		{"last step is cut to the target", 8, 4, 10, 2},
		{"no target means always a full step", 1 << 40, 4, 0, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nextChunk(tc.done, tc.step, tc.target); got != tc.want {
				t.Errorf("nextChunk(%d, %d, %d) = %d, want %d", tc.done, tc.step, tc.target, got, tc.want)
			}
		})
	}
}

func TestPacerWaitsUntilBytesOverRate(t *testing.T) {
	start := time.Now()
	p := pacer{start: start, rate: 100 << 20}
	p.wait(20 << 20) // due at start + 200ms
	// never early; late only by scheduling delay (loose: the machine is shared)
	if got := time.Since(start); got < 200*time.Millisecond || got > 2*time.Second {
		t.Errorf("wait for 20Mi at 100Mi/s returned after %v, want 200ms (at most 2s)", got)
	}
	past := pacer{start: time.Now().Add(-time.Hour), rate: 1}
	before := time.Now()
	past.wait(1) // overdue: returns at once
	if got := time.Since(before); got > time.Second {
		t.Errorf("overdue wait took %v, want immediate", got)
	}
}

func TestLoggerWritesOneJSONLinePerEntryWithTimeAndEventFirst(t *testing.T) {
	var buf bytes.Buffer
	lg := &logger{w: &buf}
	lg.log(entry{Event: "alloc", Bytes: ptr(int64(0))})
	line := buf.String()
	if !bytes.HasPrefix([]byte(line), []byte(`{"t":"`)) || !bytes.Contains([]byte(line), []byte(`,"event":"alloc","bytes":0}`+"\n")) {
		t.Fatalf("log line = %q", line)
	}
	var got struct {
		T time.Time `json:"t"`
	}
	if err := json.Unmarshal([]byte(line), &got); err != nil || got.T.IsZero() {
		t.Errorf("t does not parse as RFC3339: %v %q", err, line)
	}
}

func FuzzQuantitySet(f *testing.F) {
	for _, s := range []string{"256Mi", "3Gi", "0", "1e3", "-1Mi", "1.5Gi", "", "x", "9223372036854775807Ei"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var q quantity
		if err := q.Set(s); err != nil {
			return
		}
		if q < 0 {
			t.Errorf("Set(%q) gave negative %d without error", s, q)
		}
	})
}
