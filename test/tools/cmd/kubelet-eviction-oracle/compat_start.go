//go:build !oracle_k134

package main

import (
	"context"
	"time"

	"k8s.io/kubernetes/pkg/kubelet/eviction"
)

// startManager calls Start, which takes a context since v1.35.
func startManager(m eviction.Manager, di eviction.DiskInfoProvider, pods eviction.ActivePodsFunc,
	cleaned eviction.PodCleanedUpFunc, interval time.Duration) {
	m.Start(context.Background(), di, pods, cleaned, interval)
}
