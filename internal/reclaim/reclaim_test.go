package reclaim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

func TestReclaimV2WritesChunksCappedByMaxBytes(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "pod")
	fakeV2(t, dir, "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
	r := &Reclaimer{Root: root, MaxBytes: 300, Chunk: 128, Now: func() time.Time { return time.Unix(0, 0) }}
	res := r.Reclaim(context.Background(), dir, 1000)
	if res.Err != nil || res.Requested != 300 {
		t.Fatalf("Reclaim = %+v, want Requested 300 and no error", res)
	}
	// A regular file keeps each write at offset 0..: the writes were "128", "128", "44".
	b, _ := os.ReadFile(filepath.Join(dir, "memory.reclaim"))
	if got := string(b); got != "12812844" {
		t.Errorf("memory.reclaim got %q, want the chunks 128,128,44", got)
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
