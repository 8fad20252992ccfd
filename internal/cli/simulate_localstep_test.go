package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/sim"
)

// recordingEvery is a recording whose local samples are every 'every'.
func recordingEvery(every time.Duration) *sim.Recording {
	r := &sim.Recording{}
	for i := range 20 {
		r.Local = append(r.Local, sim.LocalSample{At: fixedNow.Add(time.Duration(i) * every)})
	}
	return r
}

func TestTheModelStepsAsOftenAsTheRecordingsLocalSamples(t *testing.T) {
	for _, tc := range []struct {
		name  string
		every time.Duration
		sets  []assignment
		want  time.Duration
		note  bool
	}{
		{"samples every 25ms: the model steps every 25ms, with a note", 25 * time.Millisecond, nil, 25 * time.Millisecond, true},
		{"samples every 100ms: the default step", 100 * time.Millisecond, nil, 100 * time.Millisecond, false},
		{"samples every 5ms: not below the 10ms floor", 5 * time.Millisecond, nil, 100 * time.Millisecond, false},
		{"--set timing.step wins", 25 * time.Millisecond, []assignment{{key: "timing.step", value: "50ms"}}, 100 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &simInput{recording: recordingEvery(tc.every)}
			timing := sim.DefaultTiming()
			in.localStep(&timing, tc.sets)
			if timing.Step != tc.want {
				t.Errorf("step %s, want %s", timing.Step, tc.want)
			}
			if got := len(in.notes) == 1 && strings.Contains(in.notes[0], "steps every"); got != tc.note {
				t.Errorf("notes %q, want a note: %t", in.notes, tc.note)
			}
		})
	}
}
