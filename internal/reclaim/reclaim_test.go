package reclaim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
)

// fakeV2 writes the files of a v2 cgroup dir (regular files: the kernel does not act on them).
func fakeV2(t *testing.T, dir, pressure string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"memory.current":  "1000\n",
		"memory.stat":     "anon 100\nfile 900\nunevictable 0\nactive_file 400\ninactive_file 500\n",
		"memory.reclaim":  "",
		"memory.pressure": pressure,
	}
	for name, s := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReclaimRefusesWhatItMustNotDo(t *testing.T) {
	calm := "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	tests := []struct {
		name      string
		dir       string // relative to the temp root; "../x" leaves it
		pressure  string
		bytes     int64
		thrashing bool
		twice     bool
		wantErr   string
	}{
		{name: "a cgroup outside the root is refused", dir: "../outside", pressure: calm, bytes: 1, wantErr: "is not under root"},
		{name: "zero bytes is refused", dir: "pod", pressure: calm, bytes: 0, wantErr: "bytes 0"},
		{name: "a thrashing v2 cgroup is refused by its memory.pressure", dir: "pod", pressure: "some avg10=42.00 avg60=1 avg300=0 total=9\n", bytes: 1, wantErr: "some avg10=42.00"},
		{name: "the caller's thrashing signal refuses", dir: "pod", pressure: calm, bytes: 1, thrashing: true, wantErr: "caller's refault signal"},
		{name: "a second call within the interval is refused", dir: "pod", pressure: calm, bytes: 1, twice: true, wantErr: "min interval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "kubepods")
			dir := filepath.Join(root, tt.dir)
			fakeV2(t, dir, tt.pressure)
			r := &Reclaimer{Root: root, Thrashing: func(string) bool { return tt.thrashing }}
			if tt.twice {
				if res := r.Reclaim(context.Background(), dir, tt.bytes); res.Err != nil {
					t.Fatalf("first call: %v", res.Err)
				}
			}
			res := r.Reclaim(context.Background(), dir, tt.bytes)
			if !errors.Is(res.Err, ErrRefused) || !strings.Contains(res.Err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want ErrRefused containing %q", res.Err, tt.wantErr)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "memory.reclaim")); len(b) != 0 && !tt.twice {
				t.Errorf("memory.reclaim written %q despite the refusal", b)
			}
		})
	}
}

// usages returns a memory.current reader that hands out the usages in order, the last one from then on,
// as the kernel's memory.current falls under the chunks.
func usages(vs ...int64) func() (int64, error) {
	i := 0
	return func() (int64, error) {
		v := vs[min(i, len(vs)-1)]
		i++
		return v, nil
	}
}

func TestReclaimV2ChunkLoop(t *testing.T) {
	tests := []struct {
		name        string
		bytes       int64
		chunk       int64
		usages      []int64 // memory.current before the loop and after each chunk
		wantWrites  string
		wantPartial bool
	}{
		{name: "the request is written in chunks, the last one the rest", bytes: 300, chunk: 128,
			usages: []int64{1000, 872, 744, 700}, wantWrites: "12812844"},
		{name: "a kernel that reclaims more than a chunk ends the loop at the measured fall", bytes: 300, chunk: 128,
			usages: []int64{1000, 800, 640}, wantWrites: "128100"},
		{name: "a chunk that lowers the usage by next to nothing stops the loop", bytes: 1000, chunk: 128,
			usages: []int64{1000, 995}, wantWrites: "128", wantPartial: true},
		{name: "a chunk whose pages were charged again at once stops the loop", bytes: 1000, chunk: 128,
			usages: []int64{1000, 872, 900}, wantWrites: "128128", wantPartial: true},
		{name: "the last chunk is not judged by its progress", bytes: 200, chunk: 128,
			usages: []int64{1000, 872, 872}, wantWrites: "12872"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pod")
			fakeV2(t, dir, "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
			partial, err := reclaimV2(context.Background(), dir, tt.bytes, tt.chunk, usages(tt.usages...))
			if err != nil {
				t.Fatalf("reclaimV2: %v", err)
			}
			// A regular file keeps each write at the fd's offset: the chunks come out concatenated.
			if b, _ := os.ReadFile(filepath.Join(dir, "memory.reclaim")); string(b) != tt.wantWrites {
				t.Errorf("memory.reclaim got %q, want %q", b, tt.wantWrites)
			}
			if partial != tt.wantPartial {
				t.Errorf("partial = %v, want %v", partial, tt.wantPartial)
			}
		})
	}
}

func TestReclaimV2RequestIsCappedByMaxBytes(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "pod")
	fakeV2(t, dir, "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
	r := &Reclaimer{Root: root, MaxBytes: 300, Chunk: 1024, Now: func() time.Time { return time.Unix(0, 0) }}
	res := r.Reclaim(context.Background(), dir, 1000)
	if res.Err != nil || res.Requested != 300 {
		t.Fatalf("Reclaim = %+v, want Requested 300 and no error", res)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "memory.reclaim")); string(b) != "300" {
		t.Errorf("memory.reclaim got %q, want 300", b)
	}
	if res.Before.File != 900 || res.Before.Anon != 100 {
		t.Errorf("Before = %+v, want file 900 anon 100 from memory.stat", res.Before)
	}
}

func TestReclaimStopsWhenTheContextIsDone(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "pod")
	fakeV2(t, dir, "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := (&Reclaimer{Root: root}).Reclaim(ctx, dir, 1<<20)
	if !errors.Is(res.Err, context.Canceled) || !res.Partial {
		t.Fatalf("Reclaim = %+v, want a partial result with context.Canceled", res)
	}
}

func TestThePodsReclaimerAcceptsThePolicysNextReclaimAFewMillisecondsEarly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		after  time.Duration
		refuse bool
	}{
		{"the policy's next reclaim, its write 2ms earlier after its step than the last", 10*time.Second - 2*time.Millisecond, false},
		{"a caller that loops is still refused", 100 * time.Millisecond, true},
		{"a second inside the interval is refused", 8 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "kubepods")
			dir := filepath.Join(root, "pod")
			fakeV2(t, dir, "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
			p := NewPods(cgroupfs.Layout{Version: cgroupfs.V2, Memory: filepath.Dir(root), PodsCgroup: "kubepods"}, 1<<30, 10*time.Second)
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			p.R.Now = func() time.Time { return now }
			if err := p.R.rate(dir); err != nil {
				t.Fatalf("first call: %v", err)
			}
			now = now.Add(tc.after)
			if err := p.R.rate(dir); (err != nil) != tc.refuse {
				t.Errorf("second call %s later: err %v, want refused %v", tc.after, err, tc.refuse)
			}
		})
	}
}

// deadlineOnly has a deadline whose timer has not cancelled it (yet): Err is nil.
type deadlineOnly struct {
	context.Context
	d time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.d, true }

func TestAPassedDeadlineStopsTheStepsBeforeItsTimerFires(t *testing.T) {
	past := deadlineOnly{context.Background(), time.Now().Add(-time.Millisecond)}
	if err := expired(past); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("expired(deadline passed, Err nil) = %v, want context.DeadlineExceeded", err)
	}
	if err := expired(deadlineOnly{context.Background(), time.Now().Add(time.Hour)}); err != nil {
		t.Errorf("expired(deadline in an hour) = %v, want nil", err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := expired(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("expired(cancelled) = %v, want context.Canceled", err)
	}
}
