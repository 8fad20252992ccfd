package ranktest

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

// Pod parses "NAME [KEY=VALUE|nostats ...]" into a candidate: pod default/NAME (uid "uid-NAME"),
// BestEffort, one regular container named NAME, measured stats (none with nostats). The keys are
// those of Arg; a key Arg does not know goes to extra (nil: an error), which returns whether it took it.
func Pod(args []string, extra func(c *rank.Candidate, key, value string) (bool, error)) (rank.Candidate, error) {
	if len(args) == 0 {
		return rank.Candidate{}, fmt.Errorf("pod needs a name")
	}
	name := args[0]
	c := rank.Candidate{UID: "uid-" + name, Namespace: "default", Name: name, QOSClass: rank.QOSBestEffort,
		Containers: []rank.Container{{Name: name, Kind: rank.ContainerRegular}},
		Stats:      &signal.PodStats{UID: "uid-" + name, Containers: []signal.ContainerStats{{Name: name}}}}
	noStats := false
	for _, a := range args[1:] {
		if a == "nostats" {
			noStats = true
			continue
		}
		k, v, _ := strings.Cut(a, "=")
		if extra != nil {
			took, err := extra(&c, k, v)
			if err != nil {
				return c, fmt.Errorf("pod %s: %s: %w", name, a, err)
			}
			if took {
				continue
			}
		}
		if err := Arg(&c, k, v); err != nil {
			return c, fmt.Errorf("pod %s: %s: %w", name, a, err)
		}
	}
	if noStats {
		c.Stats = nil
	}
	return c, nil
}

// Arg applies one KEY=VALUE of a pod line to c:
//
//	qos=Q request=Q usage=Q priority=N tgps=N procs=N threads=N rootfs=Q logs=Q ephemeral-request=Q
//	ephemeral-limit=Q (the container's and so the pod's) pod-used=Q emptydir=Q (an emptyDir "scratch"
//	with this sizeLimit) emptydir-used=Q scratch=Q (an emptyDir "data" without sizeLimit using Q bytes)
//	scratch-inodes=N logs-inodes=N rootfs-inodes=N tolerates critical=static|mirror|priority
func Arg(c *rank.Candidate, k, v string) error {
	ct, cs := &c.Containers[0], &c.Stats.Containers[0]
	var n int64
	switch k {
	case "qos", "critical", "tolerates":
	default:
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return err
		}
		n = q.Value()
	}
	u := func() *uint64 { return signal.Uint64(uint64(n)) }
	switch k {
	case "qos":
		c.QOSClass = v
	case "request":
		c.MemoryRequest, ct.MemoryRequest = n, rank.Amount{Value: n}
		if c.QOSClass == rank.QOSBestEffort {
			c.QOSClass = rank.QOSBurstable
		}
	case "usage":
		c.Stats.MemoryWorkingSet, cs.MemoryWorkingSet = u(), u()
	case "priority":
		c.Priority = int32(n)
	case "tgps":
		c.TerminationGracePeriodSeconds = rank.Int64(n)
	case "procs":
		c.Stats.ProcessCount = u()
	case "threads":
		c.Stats.ThreadCount = u()
	case "rootfs":
		cs.RootfsUsed = u()
	case "logs":
		cs.LogsUsed = u()
	case "ephemeral-request":
		c.EphemeralStorageRequest, ct.EphemeralStorageRequest = n, rank.Amount{Value: n}
	case "ephemeral-limit":
		ct.EphemeralStorageLimit, c.EphemeralStorageLimit = &rank.Amount{Value: n}, &rank.Amount{Value: n}
	case "pod-used":
		c.Stats.EphemeralStorageUsed = u()
	case "emptydir":
		c.Volumes = append(c.Volumes, rank.Volume{Name: "scratch", Kind: rank.VolumeEmptyDir, SizeLimit: &rank.Amount{Value: n}})
	case "emptydir-used":
		c.Stats.Volumes = append(c.Stats.Volumes, signal.VolumeStats{Name: "scratch", UsedBytes: u()})
	case "scratch", "scratch-inodes":
		i := len(c.Stats.Volumes)
		for j, vs := range c.Stats.Volumes {
			if vs.Name == "data" {
				i = j
			}
		}
		if i == len(c.Stats.Volumes) {
			c.Volumes = append(c.Volumes, rank.Volume{Name: "data", Kind: rank.VolumeEmptyDir})
			c.Stats.Volumes = append(c.Stats.Volumes, signal.VolumeStats{Name: "data"})
		}
		if k == "scratch" {
			c.Stats.Volumes[i].UsedBytes = u()
		} else {
			c.Stats.Volumes[i].InodesUsed = u()
		}
	case "logs-inodes":
		cs.LogsInodes = u()
	case "rootfs-inodes":
		cs.RootfsInodes = u()
	case "tolerates":
		c.ToleratesMemoryPressure = true
	case "critical":
		c.Critical = true
		c.CriticalReason = map[string]string{"static": "static pod", "mirror": "mirror pod",
			"priority": "priority " + strconv.Itoa(int(c.Priority)) + " >= 2000000000"}[v]
	default:
		return fmt.Errorf("unknown argument %q", k)
	}
	return nil
}
