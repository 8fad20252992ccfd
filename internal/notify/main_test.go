package notify_test

import (
	"os"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
)

func TestMain(m *testing.M) {
	cgrouptest.RunHogIfRequested()
	armPSIIfRequested()
	os.Exit(m.Run())
}

const mib = 1 << 20

// signalWait bounds the wait for a signal the kernel must send: a bound against a hang, not a speed
// check (a loaded 2-core host can delay a goroutine by seconds; notification latency is measured by
// the detection benchmark, docs/benchmarks.md). Checks that no signal came keep their short windows:
// load can only make those pass.
const signalWait = 30 * time.Second

// waitSignal reports whether ch received within d; d == 0 only looks at what is pending.
func waitSignal(ch <-chan struct{}, d time.Duration) bool {
	if d == 0 {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// drain empties ch.
func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
