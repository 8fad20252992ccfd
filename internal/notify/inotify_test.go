package notify_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/notify"
)

func TestFileWatchFiresWhenMemoryEventsChanges(t *testing.T) {
	p := filepath.Join(t.TempDir(), "memory.events")
	if err := os.WriteFile(p, []byte("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := notify.WatchFile(p)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, ch) }()
	if waitSignal(ch, 200*time.Millisecond) {
		t.Fatal("signal before the file changed")
	}
	if err := os.WriteFile(p, []byte("low 0\nhigh 1\nmax 0\noom 0\noom_kill 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !waitSignal(ch, signalWait) {
		t.Errorf("no signal within %s after memory.events was modified", signalWait)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run() = %v after cancel, want nil", err)
	}
}
