//go:build oracle_k134

package main

import (
	"time"

	"k8s.io/kubernetes/pkg/kubelet/eviction"
)

// startManager calls Start, which takes no context in v1.34.
func startManager(m eviction.Manager, di eviction.DiskInfoProvider, pods eviction.ActivePodsFunc,
	cleaned eviction.PodCleanedUpFunc, interval time.Duration) {
	m.Start(di, pods, cleaned, interval)
}
