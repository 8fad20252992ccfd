package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/kube-pressure/pressure/internal/notify"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
)

// runner is one mechanism under test: Run blocks until ctx ends, signalling ch on each wake-up.
type runner interface {
	Run(ctx context.Context, ch chan<- struct{}) error
}

// mechanism is a started runner with the monotonic times of its wake-ups.
type mechanism struct {
	name  string
	mu    sync.Mutex
	wakes []int64
	err   error
	done  chan struct{}
}

func (m *mechanism) times() []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int64(nil), m.wakes...)
}

// start runs r and records every wake-up's CLOCK_MONOTONIC time.
func start(ctx context.Context, name string, r runner) *mechanism {
	m := &mechanism{name: name, done: make(chan struct{})}
	ch := make(chan struct{}, 1)
	go func() {
		for range ch {
			t := cgrouptest.MonoNow()
			m.mu.Lock()
			m.wakes = append(m.wakes, t)
			m.mu.Unlock()
		}
	}()
	go func() {
		err := r.Run(ctx, ch)
		m.mu.Lock()
		m.err = err
		m.mu.Unlock()
		close(ch)
		close(m.done)
	}()
	return m
}

// build constructs the named mechanism for the cgroup dir and usage threshold. A mechanism that cannot be
// set up (PSI rejected) returns an error the report shows.
func build(cfg config, name, dir string, threshold int64) (runner, error) {
	usagePath := filepath.Join(dir, cfg.usageFile())
	poll := func(iv time.Duration) runner {
		// available = −usage, so "available < −threshold" is "usage > threshold"
		return &notify.Poller{Interval: iv, Threshold: -threshold, Read: func() (int64, error) {
			u, err := cgrouptest.ReadUint(usagePath)
			return -int64(u), err
		}}
	}
	switch name {
	case "memcg-threshold":
		n, err := notify.NewMemcgThreshold(dir)
		if err != nil {
			return nil, err
		}
		if err := n.SetThreshold(uint64(threshold)); err != nil {
			n.Close()
			return nil, err
		}
		return n, nil
	case "poll-100ms":
		return poll(100 * time.Millisecond), nil
	case "poll-250ms":
		return poll(250 * time.Millisecond), nil
	case "poll-10s":
		return poll(10 * time.Second), nil
	case "psi-some-150ms/2s":
		return notify.ArmPSI("/proc/pressure/memory", "some", 150*time.Millisecond, 2*time.Second)
	case "memory.events":
		return notify.WatchFile(filepath.Join(dir, "memory.events"))
	case "psi-cgroup-some-50ms/500ms":
		return notify.ArmPSI(filepath.Join(dir, "memory.pressure"), "some", 50*time.Millisecond, 500*time.Millisecond)
	}
	return nil, fmt.Errorf("unknown mechanism %q", name)
}

// v1Mechanisms and v2Mechanisms in report order. On cgroup v2, memory.events is watched with the
// cgroup's memory.high set at the threshold (the only way it reports a crossing before memory.max), and
// the PSI trigger is on the cgroup's own memory.pressure with a sub-second window (root may use one).
var (
	v1Mechanisms = []string{"memcg-threshold", "poll-100ms", "poll-250ms", "psi-some-150ms/2s", "poll-10s"}
	v2Mechanisms = []string{"memory.events", "poll-100ms", "poll-250ms", "psi-cgroup-some-50ms/500ms", "psi-some-150ms/2s", "poll-10s"}
)

// mechanismNames are the mechanisms of the configured cgroup version.
func (c config) mechanismNames() []string {
	if c.cgroup2 != "" {
		return v2Mechanisms
	}
	return v1Mechanisms
}

// usageFile is the cgroup's usage file: memory.usage_in_bytes (v1) or memory.current (v2).
func (c config) usageFile() string {
	if c.cgroup2 != "" {
		return "memory.current"
	}
	return "memory.usage_in_bytes"
}
