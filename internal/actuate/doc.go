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
//   - Tainter adds, refreshes and removes the loop breaker's NoSchedule taint (TaintKey) with a patch
//     guarded by the node's resourceVersion that only ever changes our own taint.
//   - Ledger remembers recent evictions per owner (Pod → ReplicaSet → Deployment, StatefulSet, DaemonSet,
//     Job), detects an eviction loop (a replacement of a just-evicted owner lands on this node again
//     within the window) and says until when the taint must stay. It is pure: time is an argument.
//     PersistentLedger keeps it in an annotation on the Node object (LedgerAnnotation), so a restarted
//     agent never requests the same eviction twice.
//   - Released sums the usage of terminating pods, which the agent counts as already released.
//
// Time comes from an injected k8s.io/utils/clock; nothing here calls time.Now or time.Sleep. Errors are
// returned, never logged.
package actuate
