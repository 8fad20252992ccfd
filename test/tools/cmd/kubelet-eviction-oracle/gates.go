package main

import (
	"fmt"
	"sort"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

// gateDefaults holds, for every feature gate an earlier case set, its value before the first case
// set it. The gates are process-global (the kubelet sets them once from its configuration), so each
// case resets the gates of earlier cases before it applies its own featureGates.
var gateDefaults = map[string]bool{}

// applyFeatureGates sets the process's feature gates as the kubelet does from the configuration's
// featureGates (cmd/kubelet/app/server.go: SetFromMap), after restoring what earlier cases changed.
func applyFeatureGates(gates map[string]bool) error {
	known := utilfeature.DefaultMutableFeatureGate.GetAll()
	names := make([]string, 0, len(gates))
	for name := range gates {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, seen := gateDefaults[name]; seen {
			continue
		}
		if _, ok := known[featuregate.Feature(name)]; !ok {
			return fmt.Errorf("featureGates: unrecognized feature gate %q", name)
		}
		gateDefaults[name] = utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(name))
	}
	all := make(map[string]bool, len(gateDefaults))
	for name, v := range gateDefaults {
		all[name] = v
	}
	for name, v := range gates {
		all[name] = v
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(all); err != nil {
		return fmt.Errorf("featureGates: %w", err)
	}
	return nil
}
