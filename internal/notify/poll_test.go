package notify_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/kube-pressure/pressure/internal/notify"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
)

// The test drives the poller one read at a time: Read blocks until the test lets it return, so while a
// read is blocked the test can look at whether the previous read signalled, with no race.
func TestPollerSignalsCrossingsAndLargeChanges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		delta  int64
		values []int64
		want   []bool // signalled after read i
	}{
		{"first read above the threshold is quiet, crossing below and back signal", 0,
			[]int64{500, 400, 90, 80, 120, 130}, []bool{false, false, true, false, true, false}},
		{"first read already below the threshold signals", 0, []int64{50, 40}, []bool{true, false}},
		{"a change larger than delta since the last signal signals", 100,
			[]int64{1000, 950, 850, 840, 700}, []bool{false, false, true, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Unix(0, 0))
			inRead, proceed := make(chan int), make(chan struct{})
			i := 0
			p := &notify.Poller{Threshold: 100, Delta: tc.delta, Interval: time.Second, Clock: clk,
				Read: func() (int64, error) {
					k := i
					i++
					inRead <- k
					<-proceed
					return tc.values[min(k, len(tc.values)-1)], nil
				}}
			ch := make(chan struct{}, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go p.Run(ctx, ch)
			for k := 0; k <= len(tc.values); k++ {
				<-inRead // read k is blocked: read k-1 has been fully handled
				if k > 0 {
					got := waitSignal(ch, 0)
					if got != tc.want[k-1] {
						t.Errorf("after read %d (value %d): signalled = %t, want %t", k-1, tc.values[k-1], got, tc.want[k-1])
					}
				}
				if k == len(tc.values) {
					cancel()
				}
				proceed <- struct{}{}
				clk.Step(time.Second)
			}
		})
	}
}

func TestPollerFiresOnARealCgroup(t *testing.T) {
	if why := cgrouptest.Available(); why != "" {
		t.Skipf("real cgroup v1 test cannot run: %s", why)
	}
	dir, hog := realCgroup(t, 512*mib)
	// available = limit − usage; signal when less than 512 − 64 MiB remains.
	p := &notify.Poller{Threshold: 448 * mib, Interval: 20 * time.Millisecond,
		Read: func() (int64, error) {
			u, err := cgrouptest.ReadUint(filepath.Join(dir, "memory.usage_in_bytes"))
			return 512*mib - int64(u), err
		}}
	ch := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Run(ctx, ch)
	if waitSignal(ch, 200*time.Millisecond) {
		t.Fatal("poller signalled before the hog allocated")
	}
	if err := hog.Alloc(96 * mib); err != nil {
		t.Fatal(err)
	}
	if !waitSignal(ch, time.Second) {
		t.Error("poller did not signal within 1s after usage crossed 64 MiB")
	}
}
