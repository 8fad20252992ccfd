package notify_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/kube-pressure/pressure/internal/notify"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
	"github.com/kube-pressure/pressure/internal/testenv"
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
				if k < len(tc.values) {
					stepWhenWaiting(clk, time.Second)
				}
			}
		})
	}
}

// stepWhenWaiting steps clk once the poller waits on it (its timer is set after the read returns).
func stepWhenWaiting(clk *testingclock.FakeClock, d time.Duration) {
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	clk.Step(d)
}

func TestAdaptivePollWaitsForTheMarginAtTheRampRate(t *testing.T) {
	const gib = 1 << 30
	p := &notify.Poller{Threshold: 0, Interval: 100 * time.Millisecond, MaxInterval: time.Second, RampRate: 4 * gib}
	for _, tc := range []struct {
		name string
		v    int64
		want time.Duration
	}{
		{"far above the threshold waits the maximum", 8 * gib, time.Second},
		{"a margin of 2Gi at 4Gi/s waits half a second", 2 * gib, 500 * time.Millisecond},
		{"a margin the ramp uses up within the interval waits the interval", 100 << 20, 100 * time.Millisecond},
		{"below the threshold waits the interval", -gib, 100 * time.Millisecond},
		{"an unknown margin (math.MaxInt64) waits the maximum", 1<<63 - 1, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.NextInterval(tc.v); got != tc.want {
				t.Errorf("NextInterval(%d) = %s, want %s", tc.v, got, tc.want)
			}
		})
	}
	fixed := &notify.Poller{Interval: 100 * time.Millisecond, MaxInterval: 100 * time.Millisecond, RampRate: 4 * gib}
	if got := fixed.NextInterval(8 * gib); got != 100*time.Millisecond {
		t.Errorf("MaxInterval = Interval: NextInterval = %s, want the fixed 100ms", got)
	}
}

func TestAdaptivePollReadsFarValuesOnlyAtTheMaximumInterval(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(0, 0))
	reads := make(chan int64, 16)
	v := int64(8 << 30)
	p := &notify.Poller{Threshold: 0, Interval: 100 * time.Millisecond, MaxInterval: time.Second, RampRate: 4 << 30,
		Clock: clk, Read: func() (int64, error) { reads <- v; return v, nil }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Run(ctx, make(chan struct{}, 1))
	<-reads // the first read is immediate
	for range 9 {
		stepWhenWaiting(clk, 100*time.Millisecond)
	}
	select {
	case <-reads:
		t.Fatal("a value 8Gi above the threshold was read again within 900ms")
	case <-time.After(50 * time.Millisecond):
	}
	stepWhenWaiting(clk, 100*time.Millisecond)
	select {
	case <-reads:
	case <-time.After(5 * time.Second):
		t.Fatal("no read after the maximum interval of 1s")
	}
}

func TestPollerFiresOnARealCgroup(t *testing.T) {
	if why := cgrouptest.Available(); why != "" {
		testenv.SkipOrFail(t, "real cgroup v1 memory test cannot run: %s", why)
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
	if !waitSignal(ch, signalWait) {
		t.Errorf("poller did not signal within %s after usage crossed 64 MiB", signalWait)
	}
}

func TestAPausedPollerSkipsItsReadsAndSignalsACrossingAtItsNextRead(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(0, 0))
	paused := []bool{false, true, true, false}
	ticks, reads := make(chan int, len(paused)), make(chan int64, len(paused))
	values := []int64{500, 50} // above the threshold, then below it: the crossing falls in the pause
	k := 0
	p := &notify.Poller{Threshold: 100, Interval: time.Second, Clock: clk,
		Paused: func() bool {
			i := k
			k++
			ticks <- i
			return paused[min(i, len(paused)-1)]
		},
		Read: func() (int64, error) {
			v := values[min(len(reads), len(values)-1)]
			reads <- v
			return v, nil
		}}
	ch := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Run(ctx, ch)
	for i, wantPaused := range paused {
		if got := <-ticks; got != i {
			t.Fatalf("tick %d asked as tick %d", i, got)
		}
		for !clk.HasWaiters() { // tick i is done once the poller waits again
			time.Sleep(time.Millisecond)
		}
		wantReads := 1
		if i == len(paused)-1 {
			wantReads = 2
		}
		if len(reads) != wantReads {
			t.Fatalf("after tick %d (paused %t): %d reads, want %d", i, wantPaused, len(reads), wantReads)
		}
		if got, want := waitSignal(ch, 0), i == len(paused)-1; got != want {
			t.Errorf("after tick %d (paused %t): signalled = %t, want %t", i, wantPaused, got, want)
		}
		if i < len(paused)-1 {
			clk.Step(time.Second) // a paused tick waits Interval
		}
	}
}
