// Package decision is the pure heart of pressure: one call of Step is one synchronize of the kubelet's
// eviction manager (of the release Input.Semantics names, v1.34 to v1.37), quirks included, so the
// agent, `kubectl pressure explain` and the simulator all decide exactly as the kubelet would.
//
// Step(State, Input) (State, Decision) takes the previous state, the time, the node observations, the
// active pods as rank.Candidates and the eviction configuration, and returns the next state and what to
// do: the node conditions to report, the "Attempting to reclaim" node event, the node-level reclaim to
// run, the pods to evict (message, event annotations, DisruptionTarget condition, kill grace, metric
// label, byte for byte as the kubelet writes them) and a Trace saying why. It performs, in order:
// thresholds met (available strictly below the resolved threshold), thresholds previously acted on kept
// until available reaches threshold + minimum reclaim, first-observed times (grace timers reset when a
// threshold is not met), node conditions with their last-observed times and the transition period
// (strict <), grace periods (>=), the stale-stats guard (an observation not newer than the previous one
// blocks eviction but not conditions), the local ephemeral-storage limit path (which may evict several
// pods and preempts pressure eviction), the choice of the threshold to act on, node-level reclaim,
// ranking (package rank) and the victim walk, which skips critical pods and evicts at most one pod.
//
// Contract with the shell:
//
//   - The State is a value: Step never modifies the one it is given. A State belongs to one Config
//     (thresholds are identified by their index, ThresholdID); start from State{} when it changes.
//   - Config.Thresholds must already hold the containerfs thresholds derived for the filesystem layout
//     (threshold.UpdateContainerFsThresholds), as the kubelet rewrites them on its first sync.
//   - When the summary cannot be read, do not call Step: the kubelet keeps its state unchanged.
//   - Node-level reclaim is two-phase. With Input.AfterReclaim nil, a step whose chosen signal has
//     reclaim functions returns Decision.NodeReclaim with Pending set and evicts nothing. Run the actions,
//     take a fresh snapshot, and call Step again from the same previous State with AfterReclaim set.
//
// Deliberate choices where the kubelet is nondeterministic: among several acted-on thresholds the kubelet
// only guarantees memory signals first, the rest follows Go map order. We pick memory.available, then
// allocatableMemory.available, then the other signals by name, then Config order (hard before soft), and
// record in the trace when the kubelet might have picked another threshold. Conditions are reported
// sorted by name (the kubelet: map order, visible in the admission message). Ranking ties are broken as
// package rank documents.
//
// Admit is the kubelet's admission handler over the reported conditions. PredictOrder shows the order in
// which pods would go if the pressure persisted: first the pods over a local ephemeral-storage limit,
// which the next step evicts together (met threshold or not), then the whole ranking of the others.
//
// Input.Semantics picks the kubelet release to follow (1.34 to 1.37, with the feature gates that change a
// decision; ResolveSemantics reads a node's kubeletVersion). The zero value is the pinned 1.37.
// docs/kubelet-versions.md lists every difference and where it is applied.
//
// The package is pure: no I/O, clock, logging or goroutines.
package decision
