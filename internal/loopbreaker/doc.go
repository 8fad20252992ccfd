// Package loopbreaker keeps eviction loops from forming, per workload and on the cluster's own
// machinery:
//
//   - Ledger remembers recent evictions per owner (the pod's controller: ReplicaSet, StatefulSet, Job,
//     ...), keeps the owners' avoidances of the node (new pods of an Avoidable owner avoid the node for
//     the cooldown after an eviction), and detects an eviction loop (an evicted pod created after an
//     earlier eviction of its owner here: a replacement that came back), which extends the avoidance.
//     It is pure: time is an argument. It stores whether each eviction settled; whether one is still in
//     flight is the policy's rule (policy.InFlightRule, carried in LedgerPolicy.InFlight for pruning),
//     read through PolicyLedger. PersistentLedger keeps it in an annotation on the Node object
//     (LedgerAnnotation), so a restarted agent knows which evictions it already carried out, and
//     publishes the avoidances through an AvoidanceWriter. Its mutex only guards memory: writes (and
//     Load's read) go to the API outside it, so a reader never waits for the API server.
//   - AvoidanceParams writes the node's avoidance ConfigMap (server-side apply): the parameters of the
//     chart's MutatingAdmissionPolicy that gives new pods of avoided owners a node anti-affinity.
//   - Tainter adds, refreshes and removes the pressure taint (TaintKey, NoSchedule) with a patch
//     guarded by the node's resourceVersion that only ever changes our own taint; when the taint is
//     wanted is the policy's (internal/policy), applying it the agent's (agent.Breaker).
//
// actuate's Ladder publishes a new avoidance before it evicts, records the eviction and takes the
// avoidance back when the eviction did not happen (policy.Escalation says which). Time comes from the caller; errors are returned,
// never logged.
package loopbreaker
