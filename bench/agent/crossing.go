package main

import (
	"time"
)

// crossSample is how often crossWatch reads the pods cgroup.
const crossSample = 10 * time.Millisecond

// crossWatch samples the pods cgroup's working set while a ramp runs and keeps the first time its
// allocatableMemory.available (limit − working set) was at or below the agent's threshold: the
// crossing as the agent's signal sees it, stress container overhead included. The time is late by
// at most one interval plus a read, so a latency measured from it may be short by as much.
type crossWatch struct {
	stopc chan struct{}
	done  chan struct{}
	at    time.Time
}

func watchCrossing(dir string, limit, threshold int64) *crossWatch {
	w := &crossWatch{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(crossSample)
		defer tick.Stop()
		for {
			if ws, err := workingSet(dir); err == nil && limit-ws <= threshold {
				w.at = time.Now()
				return
			}
			select {
			case <-w.stopc:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// stop ends the sampling and returns the crossing (zero: not seen).
func (w *crossWatch) stop() time.Time {
	close(w.stopc)
	<-w.done
	return w.at
}
