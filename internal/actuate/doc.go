// Package actuate carries out the agent's decisions on the cluster and, as a last resort, on the node.
//
// It is the agent package that asks the Kubernetes API for evictions and writes the agent's events.
// Its parts are independent of the policy: the agent maps a planned eviction into a Request.
//
//   - Evictor asks the Eviction API (policy/v1 Eviction subresource) to evict one pod, with the computed
//     grace period and a UID precondition, so a pod recreated under the same name is never evicted by a
//     stale request. It classifies every answer as one Outcome: evicted, gone (404, or the UID no longer
//     matches: success-like, never retried), blocked by a PodDisruptionBudget (429 with a DisruptionBudget
//     cause), API unavailable (retryable) or failed. Evictor.Delete is the same for a plain pod DELETE.
//   - Ladder escalates: (1) the Eviction API; (2) only for a hard threshold, when a PDB refuses, wait
//     LadderConfig.PDBFallbackWait (default 5s), ask the Eviction API once more, then DELETE the pod with
//     the same grace and UID precondition; soft thresholds never fall back, they honour PDBs; (3) only for
//     a hard threshold and only when the API is unreachable, SIGKILL the processes of the pod's cgroup
//     (a PodKiller: internal/cgroupkill). The Result records every rung tried and the one that ended it.
//     In dry-run the Ladder only writes a "would evict" event.
//   - Events records the pod, node and owner events listed in docs/events.md through a client-go
//     record.EventRecorder (NewEventRecorder builds one whose correlator uses an injected clock).
//   - The loop breaker's parts (ledger, avoidances, taint) are in internal/loopbreaker; the Ladder uses
//     its PersistentLedger.
//
// Time comes from an injected k8s.io/utils/clock; nothing here calls time.Now or time.Sleep. Errors are
// returned, never logged.
package actuate
