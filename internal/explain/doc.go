// Package explain turns what is known about one node (its capacity, the kubelet's eviction
// configuration, a signal.Snapshot, the active pods as rank.Candidates and the node's reported
// conditions) into a Report that answers the operator's questions, and renders it:
//
//   - allocatable math: capacity − kube-reserved − system-reserved − hard eviction threshold =
//     allocatable, per resource, and for every threshold the usage at which it fires, in the
//     resource's unit and as a percentage of capacity;
//   - every signal now: available, resolved threshold, margin, met or not, stats age;
//   - what the node's kubelet (its release's semantics, the pinned v1.37 when unknown) would do if
//     the pressure persisted: first the pods over a local ephemeral-storage limit (emptyDir
//     sizeLimit, the pod's or a container's ephemeral-storage limit), which it evicts at its next
//     synchronize whether or not a threshold is met, then the thresholds met, node conditions,
//     the resource reclaimed and the full predicted eviction order of the other pods, each pod with
//     the ranking key that put it before the next, critical pods marked as never evicted, and the
//     kubelet's exact eviction message and kill grace period;
//   - which workloads pressure-agent keeps off the node after evicting their pods (Input.Avoidances,
//     from the agent's ledger), and until when;
//   - what pressure-agent would do with its own policy, side by side (Report.Pressure): its thresholds
//     (the kubelet's hard ones raised by the headroom, with the minimum reclaim), the target, the pods
//     it would evict at one sync in order and what it does with every other ranked pod, and where and
//     why that differs from the kubelet's answer, with the settings of Input.Agent or the agent's
//     defaults (the report names which).
//
// Build computes the Report with the decision core (decision.PredictOrder, with soft thresholds
// treated as past their grace period and node-level reclaim assumed to free nothing), so the
// prediction is the kubelet's own decision, not a re-implementation. Text renders aligned, sectioned
// human output; JSON renders the same Report for tools (YAML is produced from the JSON by the CLI).
// Quantities are human-readable in Text (Gi/Mi with one decimal where needed) and exact in JSON
// (bytes, counts and millicores as integer strings).
//
// The agent's answer comes from policy.Step itself (Input.Persisting, from a fresh state), the code the
// agent runs, on an input built by policy.NewInput, the agent's own builder, from the same snapshot and
// pods, the terminal pods still being deleted and the agent's ledger (Input.Ledger: its evictions not
// settled are in flight and credited). What the input lacks (no ledger, no reclaim estimate, no
// escalation settings) is a note, never a zero. Each victim also says what the agent's shell does after
// the plan (escalation.go): when a PodDisruptionBudget refuses (Input.Ladder: the PDB wait and DELETE
// fallback of a hard eviction) and what the eviction does to its workload's avoidance of the node
// (Input.ForeseeAvoidance, which the CLI answers with the agent's ledger rules). Whether a
// PodDisruptionBudget refuses is not known here: the API server decides when the agent asks.
//
// The package is pure: it imports only the standard library, the core packages and
// k8s.io/apimachinery's resource.Quantity; it performs no I/O beyond the io.Writer it is given and
// never reads a clock (Input.Now is an argument). Map iteration order never reaches the output.
package explain
