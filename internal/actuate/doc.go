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
//   - Ladder carries out the escalation ladder whose every choice is the policy's (policy.Escalation):
//     it asks Escalation.Next for one move (publish the avoidance, wait, Eviction API, DELETE, cgroup kill
//     through a PodKiller such as internal/cgroupkill, stop), makes that call or wait, feeds the outcome
//     back and asks again. The policy's rungs: (1) the Eviction API; (2) only for a hard threshold with
//     AllowDelete, when a PDB refuses, wait PDBFallbackWait (default 5s), ask once more, then DELETE the
//     pod with the same grace and UID precondition; soft thresholds honour PDBs; (3) only for a hard
//     threshold with AllowCgroupKill, when the API is unreachable (IsUnreachable: no HTTP answer), SIGKILL
//     the pod's processes. The Result records every rung tried, the one that ended it and the policy's
//     reason for each move. In dry-run the Ladder only writes a "would evict" event. The Ladder never
//     decides whether a pod is in flight: the policy plans no eviction of a pod terminating or in flight
//     (policy.InFlightRule). kubectl pressure simulate and explain run the same ladder (policy.Foresee);
//     a test checks the Ladder makes the calls and waits Foresee says.
//   - Events records the pod, node and owner events listed in docs/events.md through a client-go
//     record.EventRecorder (NewEventRecorder builds one whose correlator uses an injected clock).
//   - The loop breaker's parts (ledger, avoidances, taint) are in internal/loopbreaker; the Ladder uses
//     its PersistentLedger.
//
// Time comes from an injected k8s.io/utils/clock; nothing here calls time.Now or time.Sleep. Errors are
// returned, never logged.
package actuate
