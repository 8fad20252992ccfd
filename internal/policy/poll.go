package policy

import "time"

// NextPoll is the adaptive poll's wait after a read with margin bytes left before a threshold: the
// time a fall at rate bytes per second takes to use the margin up, bounded by minWait and maxWait.
// At or below the threshold, with no rate, or with maxWait ≤ minWait it is minWait. So a fall at rate
// or slower is seen within minWait of its crossing while a margin far from every threshold costs a read
// every maxWait. The agent's poller and the simulator share it.
func NextPoll(margin int64, minWait, maxWait time.Duration, rate int64) time.Duration {
	if maxWait <= minWait || rate <= 0 || margin <= 0 {
		return minWait
	}
	secs := float64(margin) / float64(rate)
	if secs >= maxWait.Seconds() {
		return maxWait
	}
	return max(time.Duration(secs*float64(time.Second)), minWait)
}
