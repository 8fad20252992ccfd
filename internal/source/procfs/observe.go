package procfs

import (
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
)

// ObservePIDs returns the pid.available observation, measured at now:
// available = min(pid_max, threads-max) − tasks, capacity = min(pid_max, threads-max).
func (r *Reader) ObservePIDs(now time.Time) (signal.Observation, error) {
	p, err := r.PIDs()
	if err != nil {
		return signal.Observation{}, err
	}
	return signal.Observation{
		Available: p.Available(),
		Capacity:  int64(p.Max()),
		Time:      now,
		Source:    signal.SourceProcfs,
	}, nil
}
