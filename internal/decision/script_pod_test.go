package decision

import (
	"fmt"
	"strconv"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

// pod adds or replaces a pod with one container named after it.
func (m *machine) pod(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("pod needs a name")
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
		if err := podArg(&c, a); err != nil {
			return fmt.Errorf("pod %s: %w", name, err)
		}
	}
	if noStats {
		c.Stats = nil
	}
	for i := range m.pods {
		if m.pods[i].Name == name {
			m.pods[i] = c
			return nil
		}
	}
	m.pods = append(m.pods, c)
	return nil
}

func podArg(c *rank.Candidate, a string) error {
	k, v := kv(a)
	ct, cs := &c.Containers[0], &c.Stats.Containers[0]
	var n int64
	var err error
	switch k {
	case "qos", "critical", "tolerates":
	default:
		if n, err = quantity(v); err != nil {
			return err
		}
	}
	switch k {
	case "qos":
		c.QOSClass = v
	case "request":
		c.MemoryRequest, ct.MemoryRequest = n, rank.Amount{Value: n}
		if c.QOSClass == rank.QOSBestEffort {
			c.QOSClass = rank.QOSBurstable
		}
	case "usage":
		c.Stats.MemoryWorkingSet, cs.MemoryWorkingSet = signal.Uint64(uint64(n)), signal.Uint64(uint64(n))
	case "priority":
		c.Priority = int32(n)
	case "tgps":
		c.TerminationGracePeriodSeconds = rank.Int64(n)
	case "procs":
		c.Stats.ProcessCount = signal.Uint64(uint64(n))
	case "rootfs":
		cs.RootfsUsed = signal.Uint64(uint64(n))
	case "logs":
		cs.LogsUsed = signal.Uint64(uint64(n))
	case "ephemeral-request":
		c.EphemeralStorageRequest, ct.EphemeralStorageRequest = n, rank.Amount{Value: n}
	case "tolerates":
		c.ToleratesMemoryPressure = true
	case "critical":
		c.Critical = true
		c.CriticalReason = map[string]string{"static": "static pod", "mirror": "mirror pod",
			"priority": "priority " + strconv.Itoa(int(c.Priority)) + " >= 2000000000"}[v]
	default:
		return fmt.Errorf("unknown argument %q", a)
	}
	return nil
}
