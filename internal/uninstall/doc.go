// Package uninstall is what `helm uninstall` runs before it deletes the chart's objects (the chart's
// pre-delete hook, `pressure-agent cleanup`): it stops the agents while their ServiceAccount and RBAC
// still exist, so that each removes its own NoSchedule taint on the way out, then removes the taint
// from any node where an agent could not (its node unreachable, or the agent killed).
//
// Without it an agent that held its taint at uninstall time left its node unschedulable for good:
// helm deletes the DaemonSet and the agent's RBAC in the same call, so the agent's own release at
// SIGTERM was refused.
package uninstall
