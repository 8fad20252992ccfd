package threshold_test

import (
	"fmt"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

func Example() {
	hard, err := threshold.ParseFlagMap("memory.available<100Mi, nodefs.available<10%")
	if err != nil {
		panic(err)
	}
	cfg, err := threshold.ParseConfig(threshold.Input{EvictionHard: hard, EvictionHardSet: true})
	if err != nil {
		panic(err)
	}
	for _, t := range cfg.Thresholds {
		fmt.Println(t)
	}
	obs := signal.Observation{Available: 10 << 30, Capacity: 100 << 30}
	nodefs := cfg.Thresholds[2]
	fmt.Printf("%s met with 10Gi of 100Gi available: %v (threshold quantity %s)\n", nodefs.Signal,
		threshold.Met(nodefs, obs, false), threshold.FormatThreshold(nodefs.Value, obs.Capacity))
	// Output:
	// allocatableMemory.available<100Mi
	// memory.available<100Mi
	// nodefs.available<10%
	// nodefs.available met with 10Gi of 100Gi available: true (threshold quantity 10737418400)
}
