package e2e

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/procfs"
)

// memSampler reads the pods cgroup's working-set signal and the node's memory PSI every 250ms, and the
// file refaults (pods cgroup memory.stat) and activations (/proc/vmstat: cgroup v1 counts none per cgroup)
// over the window.
type memSampler struct {
	mu                 sync.Mutex
	minAvail           int64
	maxSome, maxFull   float64
	stop               func()
	reader             *cgroupfs.Reader
	proc               *procfs.Reader
	samples, readFails int
	// level, when set, is an available amount whose first crossing (working set) the sampler records at
	// levelAt; first and last are the window's first and last workingset counters.
	level       int64
	levelAt     time.Time
	first, last counterSample
}

// counterSample is one reading of the file refaults of the pods cgroup and the node's file activations
// (pages).
type counterSample struct {
	at                 time.Time
	refaults, activate uint64
	ok                 bool
}

func startMemSampler(t *testing.T) *memSampler {
	t.Helper()
	l, err := cgroupfs.Detector{Root: cgroupfs.DefaultRoot}.Detect()
	if err != nil {
		t.Fatal(err)
	}
	s := &memSampler{minAvail: 1 << 62, reader: &cgroupfs.Reader{Layout: l}, proc: procfs.NewReader(procfs.DefaultRoot)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.stop = func() { cancel(); <-done }
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			s.sample()
			select {
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(s.stop)
	return s
}

func (s *memSampler) sample() {
	now := time.Now()
	o, err := s.reader.AllocatableMemory(now)
	psi, perr := s.proc.Pressure(now)
	c := s.counters(now)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	if err != nil || perr != nil {
		s.readFails++
		return
	}
	s.minAvail = min(s.minAvail, o.Available)
	if s.level > 0 && s.levelAt.IsZero() && o.Available < s.level {
		s.levelAt = now
	}
	if c.ok {
		if !s.first.ok {
			s.first = c
		}
		s.last = c
	}
	for _, p := range psi {
		if p.Resource == "memory" {
			s.maxSome = max(s.maxSome, p.Some.Avg10)
			if p.Full != nil {
				s.maxFull = max(s.maxFull, p.Full.Avg10)
			}
		}
	}
}

func (s *memSampler) counters(now time.Time) counterSample {
	m, err := s.reader.PodsMemoryStat()
	vm, verr := s.proc.Vmstat()
	if err != nil || verr != nil || m.WorkingsetRefaultFile == nil {
		return counterSample{}
	}
	act, ok := vm["workingset_activate_file"]
	return counterSample{at: now, refaults: *m.WorkingsetRefaultFile, activate: act, ok: ok}
}

// rates are the window's mean file refault rate of the pods cgroup and node activation rate, MiB/s.
func (s *memSampler) rates() (refaults, activations float64) {
	dt := s.last.at.Sub(s.first.at).Seconds()
	if !s.first.ok || dt <= 0 {
		return 0, 0
	}
	page := float64(os.Getpagesize()) / float64(mib)
	return float64(s.last.refaults-s.first.refaults) * page / dt, float64(s.last.activate-s.first.activate) * page / dt
}

// crossedAt is when the working set first left less than level available since the last reset (zero:
// never).
func (s *memSampler) crossedAt() time.Time { s.mu.Lock(); defer s.mu.Unlock(); return s.levelAt }

// reset starts a new measurement window; level, when positive, is the available amount whose first
// crossing is recorded (crossedAt).
func (s *memSampler) reset(level int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.minAvail, s.maxSome, s.maxFull = 1<<62, 0, 0
	s.level, s.levelAt, s.first, s.last = level, time.Time{}, counterSample{}, counterSample{}
}

func (s *memSampler) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ref, act := s.rates()
	return fmt.Sprintf("lowest allocatableMemory.available (working set) %dMi; node memory PSI avg10 max some %.2f%% full %.2f%%; "+
		"mean file refaults (pods) %.1fMi/s, activations (node) %.1fMi/s (%d samples, %d failed)",
		s.minAvail/mib, s.maxSome, s.maxFull, ref, act, s.samples, s.readFails)
}

func (s *memSampler) lowest() int64 { s.mu.Lock(); defer s.mu.Unlock(); return s.minAvail }

// podsWorkingSet is the pods cgroup's working set now.
func podsWorkingSet(t *testing.T, s *memSampler) int64 {
	t.Helper()
	o, err := s.reader.AllocatableMemory(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return o.Capacity - o.Available
}
