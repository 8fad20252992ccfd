package soak

import (
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// growthSettle is how long after its workloads' growth an episode runs at least: their pods' start
// (a few seconds on the test node) and the agent's and the kubelet's reaction to the last of it.
const growthSettle = 15 * time.Second

// Growth is how long the workload grows after it starts: a paced hog or disk writer reaches --target
// at --rate, a files workload makes --count at --rate per second. An unpaced hog (--rate 0), a page-cache
// reader, a thrasher, a fork loop and a steady pod have no pace to reckon with and count 0 (the unpaced
// ones reach their size within seconds). A flag that does not parse is an error naming it.
func (w Workload) Growth() (time.Duration, error) {
	if len(w.Args) == 0 {
		return 0, nil
	}
	flags := map[string]string{}
	for i := 1; i+1 < len(w.Args); i += 2 {
		flags[w.Args[i]] = w.Args[i+1]
	}
	switch w.Args[0] {
	case "mem", "disk":
		rate, err := w.quantity(flags, "--rate")
		if err != nil || rate == 0 {
			return 0, err
		}
		target, err := w.quantity(flags, "--target")
		if err != nil {
			return 0, err
		}
		return time.Duration(float64(target) / float64(rate) * float64(time.Second)), nil
	case "files":
		count, err := w.integer(flags, "--count")
		if err != nil {
			return 0, err
		}
		rate, err := w.integer(flags, "--rate")
		if err != nil || rate == 0 {
			return 0, err
		}
		return time.Duration(float64(count) / float64(rate) * float64(time.Second)), nil
	}
	return 0, nil
}

func (w Workload) quantity(flags map[string]string, name string) (int64, error) {
	q, err := resource.ParseQuantity(flags[name])
	if err != nil {
		return 0, fmt.Errorf("workload %s: %s %q: %w", w.Name, name, flags[name], err)
	}
	return q.Value(), nil
}

func (w Workload) integer(flags map[string]string, name string) (int64, error) {
	n, err := strconv.ParseInt(flags[name], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("workload %s: %s %q: %w", w.Name, name, flags[name], err)
	}
	return n, nil
}

// MinDuration is how long the episode runs before the driver looks for calm: at least floor, its
// slowest workload's Growth plus growthSettle, and its fault's end plus growthSettle. A node is calm
// only for a moment while a slow hog still grows toward its target (seed 20261205 episode 86: a hog at
// 16 MiB/s to 896 MiB, 56 s, in an episode that ended at 47 s; the agent evicted after the recording
// stopped, and simulate could not see why).
func (p Plan) MinDuration(floor time.Duration) (time.Duration, error) {
	d := floor
	for _, w := range p.Workloads {
		g, err := w.Growth()
		if err != nil {
			return 0, fmt.Errorf("episode %d: %w", p.Episode, err)
		}
		d = max(d, g+growthSettle)
	}
	if p.Fault != nil {
		d = max(d, time.Duration(p.Fault.At+p.Fault.For)+growthSettle)
	}
	return d, nil
}
