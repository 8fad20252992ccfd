// Package owner resolves a pod to the workload users look at: the pod's controller (ControllerOf),
// lifted from a ReplicaSet to the Deployment that owns it (Workload, pure; Resolver, through the API
// with a cache). Workloads are the policy's (policy.Workload): the agent's loop rules key avoidances
// and loops by it, the janitor keeps its newest pods and writes its evidence on it: one rule for both.
package owner
