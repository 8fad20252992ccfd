// Package actuate carries out the agent's decisions on the cluster and, as a last resort, on the node.
//
// It is the only agent package that writes to the Kubernetes API. Its parts are independent of the
// decision core: the agent maps a decision into a Request and calls them.
//
//   - Evictor asks the Eviction API (policy/v1 Eviction subresource) to evict one pod, with the computed
//     grace period and a UID precondition, so a pod recreated under the same name is never evicted by a
//     stale request. It classifies every answer as one Outcome: evicted, gone (404, or the UID no longer
//     matches: success-like, never retried), blocked by a PodDisruptionBudget (429 with a DisruptionBudget
//     cause), API unavailable (retryable) or failed. Evictor.Delete is the same for a plain pod DELETE.
//   - Ladder escalates: (1) the Eviction API; (2) only for a hard threshold, when a PDB refuses, wait
//     LadderConfig.PDBFallbackWait (default 5s), ask the Eviction API once more, then DELETE the pod with
//     the same grace and UID precondition; soft thresholds never fall back, they honour PDBs; (3) only for
//     a hard threshold and only when the API is unreachable, SIGKILL the processes of the pod's cgroups
//     (CgroupKiller). The Result records every rung tried and the one that ended it. In dry-run the Ladder
//     only writes a "would evict" event.
//   - CgroupKiller SIGKILLs every process below a pod's cgroup (cgroup v1 memory controller and cgroup v2,
//     cgroupfs and systemd drivers), using cgroup.kill where the kernel has it.
//   - Events records the pod, node and owner events listed in docs/events.md through a client-go
//     record.EventRecorder (NewEventRecorder builds one whose correlator uses an injected clock).
//   - Tainter adds, refreshes and removes the pressure taint (TaintKey, NoSchedule) with a patch
//     guarded by the node's resourceVersion that only ever changes our own taint.
//   - Ledger remembers recent evictions per owner (the pod's controller: ReplicaSet, StatefulSet, Job,
//     ...), keeps the owners' avoidances of the node (new pods of an Avoidable owner avoid the node for
//     the cooldown after an eviction), and detects an eviction loop (an evicted pod created after an
//     earlier eviction of its owner here: a replacement that came back), which extends the avoidance.
//     It is pure: time is an argument. PersistentLedger keeps it in an annotation on the Node object
//     (LedgerAnnotation), so a restarted agent never requests the same eviction twice, and publishes
//     the avoidances through an AvoidanceWriter. The Ladder publishes a new avoidance before it evicts
//     and takes it back when the eviction did not happen.
//   - AvoidanceParams writes the node's avoidance ConfigMap (server-side apply): the parameters of the
//     chart's MutatingAdmissionPolicy that gives new pods of avoided owners a node anti-affinity.
//   - Released sums the usage of terminating pods, which the agent counts as already released.
//
// Time comes from an injected k8s.io/utils/clock; nothing here calls time.Now or time.Sleep. Errors are
// returned, never logged.
package actuate
