package rank

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/kube-pressure/pressure/internal/signal"
)

var (
	byExceeds = comparator{key: KeyExceedsRequest, stats: true,
		cmp:  func(a, b Values) int { return cmpBool(a.Exceeds, b.Exceeds) },
		show: showExceeds}
	byExceedsDisk = comparator{key: KeyExceedsDiskRequest, stats: true,
		cmp:  func(a, b Values) int { return cmpBool(a.Exceeds, b.Exceeds) },
		show: showExceeds}
	byPriority = comparator{key: KeyPriority,
		cmp:  func(a, b Values) int { return cmp.Compare(a.Priority, b.Priority) },
		show: func(v Values) string { return strconv.Itoa(int(v.Priority)) }}
	byUsageAboveRequest = comparator{key: KeyUsageAboveRequest, stats: true,
		cmp:  func(a, b Values) int { return cmp.Compare(b.Score, a.Score) },
		show: func(v Values) string { return strconv.FormatInt(v.Score, 10) }}
	byProcessCount = comparator{key: KeyProcessCount, stats: true,
		cmp:  func(a, b Values) int { return cmp.Compare(b.Score, a.Score) },
		show: func(v Values) string { return strconv.FormatInt(v.Score, 10) }}
	byDiskAboveRequest = comparator{key: KeyDiskUsageAboveRequest, stats: true,
		cmp:  func(a, b Values) int { return cmp.Compare(b.Score, a.Score) },
		show: func(v Values) string { return strconv.FormatInt(v.Score, 10) }}
)

func showExceeds(v Values) string {
	op := "<="
	if v.Exceeds {
		op = ">"
	}
	return fmt.Sprintf("%d %s %d", v.Usage, op, v.Request)
}

// chainFor returns the kubelet's comparator chain for sig (rankMemoryPressure, rankPIDPressure,
// rankDiskPressureFunc). ok is false for a signal without a rank function.
func chainFor(sig signal.Signal, layout signal.FilesystemLayout) ([]comparator, bool) {
	switch {
	case sig.IsMemory():
		return []comparator{byExceeds, byPriority, byUsageAboveRequest}, true
	case sig == signal.PIDAvailable:
		return []comparator{byPriority, byProcessCount}, true
	}
	if _, ok := diskStatsFor(sig, layout); ok {
		return []comparator{byExceedsDisk, byPriority, byDiskAboveRequest}, true
	}
	return nil, false
}

// valuesFunc returns the function computing a candidate's Values for sig.
func valuesFunc(sig signal.Signal, layout signal.FilesystemLayout) func(Candidate) Values {
	m, disk := diskStatsFor(sig, layout)
	inodes := sig.Resource() == signal.ResourceInodes
	return func(c Candidate) Values {
		v := Values{HasStats: c.Stats != nil, Priority: c.Priority}
		switch {
		case sig.IsMemory():
			v.Usage, v.Request = memoryUsage(c), c.MemoryRequest
			v.Exceeds, v.Score = v.Usage > v.Request, v.Usage-v.Request
		case sig == signal.PIDAvailable:
			// The kubelet compares uint64 counts by int(p2 - p1): the sign is right for any
			// realistic count, so a plain comparison of the values is equivalent.
			v.Usage = int64(processCount(c))
			v.Score = v.Usage
		case disk:
			v.Usage = diskUsage(c, m, inodes)
			if !inodes {
				v.Request = c.EphemeralStorageRequest // there is never an "inodes" request
			}
			v.Exceeds = v.Usage > v.Request
			// Quirk: the ephemeral-storage request (bytes) is subtracted even when ranking inodes.
			v.Score = v.Usage - c.EphemeralStorageRequest
		}
		return v
	}
}
