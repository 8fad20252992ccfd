// Package loopbreaker stores what the policy's loop rules decide and applies the taint the policy
// wants; it decides nothing:
//
//   - PersistentLedger keeps the node's eviction history (policy.History: loop detection, the owners'
//     avoidances of the node, pruning by the in-flight rule) in an annotation on the Node object
//     (LedgerAnnotation), so a restarted agent knows which evictions it already carried out, and
//     publishes the avoidances in force through an AvoidanceWriter. Each method runs one policy.History
//     rule and saves the result. Its mutex only guards memory: writes (and Load's read) go to the API
//     outside it, so a reader never waits for the API server. WriteLedger and ReadLedger are the
//     annotation's wire format (JSON, versioned, strictly read).
//   - AvoidanceParams writes the node's avoidance ConfigMap (server-side apply): the parameters of the
//     chart's MutatingAdmissionPolicy that gives new pods of avoided owners a node anti-affinity.
//   - Tainter adds, refreshes and removes the pressure taint (TaintKey, NoSchedule) with a patch
//     guarded by the node's resourceVersion that only ever changes our own taint; when the taint is
//     wanted is the policy's (internal/policy), applying it the agent's (agent.Breaker).
//
// actuate's Ladder publishes a new avoidance before it evicts, records the eviction and takes the
// avoidance back when the eviction did not happen (policy.Escalation says which). Time comes from the
// caller; errors are returned, never logged.
package loopbreaker
