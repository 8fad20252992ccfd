// Package policy is pressure-agent's eviction policy as a pure function of observations, pods and time:
//
//	Step(State, Input{Now, Config, Kubelet, Snapshot, Pods, InFlight, Outcomes}) (State, Plan)
//
// One Step is one sync of the agent. It derives the thresholds the policy acts on (the kubelet's,
// containerfs thresholds derived from the first observed filesystem layout, and for policy Pressure the
// hard ones raised by a headroom and every byte threshold given a minimum reclaim), runs the kubelet's
// synchronize (internal/decision) on them, and decides what the agent does about it:
//
//   - Pressure: evict to a target. Pods whose eviction is under way are not candidates, and the usage
//     they had when their eviction was requested (never more, and never after their grace period plus
//     Config.TerminatingMargin) counts as available again. The victim walk takes pods in the kubelet's
//     rank order until their expected release brings the signal back to threshold + minimum reclaim, at
//     most Config.MaxEvictionsPerSync per step and Config.MaxEvictionsPerMinute in any sliding minute;
//     critical pods, pods that free nothing (no cgroup, no usage) and pods a PodDisruptionBudget refused
//     within Config.PDBRetry are skipped, so the next pod is tried. For the disk, inode and PID signals
//     the walk takes one pod per step: its measured usage (rank.DiskUsage: logs, writable layers and
//     local volumes as the kubelet counts them for the signal's filesystem; threads for pid.available) is
//     credited while it is in flight, the node is measured again and the next step decides again. A pod
//     whose disk usage is not measured is never evicted blindly for a disk signal. On a filesystem that
//     holds images, the headroom of a disk threshold is withheld where the raised threshold would reach
//     the kubelet's image GC start (Plan.Headroom says so). A disk step for which the kubelet would run
//     node-level reclaim (container and image GC) first is completed on the shell's estimate
//     (Input.Reclaimable): when it could free what is needed, no pod is evicted and the kubelet's GC
//     reclaims first; unknown counts as freeing nothing.
//   - Kubelet: the kubelet's answer, one pod per step (quirks included: a pod without stats ranks
//     first), bounded by the same minute limit.
//   - ReclaimAware: Pressure on what the kernel cannot reclaim. Each memory signal's available amount is
//     re-read on the non-reclaimable estimate (EstimateReclaim: the scope's file pages minus dirty,
//     writeback and what was refaulted within ReclaimConfig.RefaultWindow; anon and shmem are never
//     reclaimable): capacity − (usage − reclaimable). Unless the kernel's stall signals confirm the
//     pressure (memory PSI some/full avg10 of the node or the pods cgroup, and the file activation or
//     refault rate), the policy acts on that estimate alone, so clean page cache never causes an
//     eviction while a growing anonymous hog still does (the fast path needs no PSI). Confirmed, it acts
//     on the lower of the estimate and the working set, as it does once the working set is within
//     ReclaimConfig.KubeletMargin of the kubelet's own threshold (the kubelet evicts there whatever the
//     estimate says). Pods are ranked by their non-reclaimable usage
//     above request. Where the estimate is unknown (no memory.stat, or no refault rate yet while PSI is
//     not low) the signal is acted on as Pressure does. Plan.Reclaim records each view. Without the
//     reclaim rung the backstop also needs the kubelet to really act (ReclaimConfig.KubeletHorizon:
//     below its threshold, or falling across it soon). With the rung (ReclaimConfig.Action, rung.go),
//     a backstop eviction that only the cache gap causes becomes Plan.Reclaims (pods' page cache to
//     reclaim, outcomes back in Input.Reclaims), and the eviction waits for the reclaim to settle.
//
// The Plan lists what to carry out: evictions (with their rank, expected release and why), SIGKILLs of
// pods the memory trend says the OOM killer would reach before their eviction completes
// (Config.KillLead; a kill goes with its pod's eviction in the same Plan, or with its deferred one,
// and the shell carries it out after that eviction's request unless the request already ended the pod), the wanted state of the node's pressure taint (on while
// a threshold of ours is met and for Config.TaintHysteresis after), the node events (pressure started,
// ended), evictions deferred and why (API backoff, minute limit), and a trace. The shell carries the
// Plan out and feeds what happened (Outcome) into the next Step: an eviction planned is counted as in
// flight from the Step that planned it, so a Step that runs before the outcome is known never plans it
// again; an outcome that says nothing happened (refused, failed, the API unreachable) gives the pod
// back. The API backoff is part of the State: only an outcome whose API call got no answer (or "try
// later") opens or extends it, only an answer resets it, and a cgroup kill does neither.
//
// Escalation (escalate.go) is the escalation ladder of one planned eviction, also pure: the shell
// (actuate.Ladder) asks Next for one move (publish the avoidance, wait, Eviction API, DELETE, cgroup
// kill, stop), carries it out and feeds back what happened (Avoided, Waited, Tried). A pod terminating
// or in flight never gets a ladder: Step does not plan it.
// A hard eviction refused by a PodDisruptionBudget is asked once more after LadderConfig.PDBFallbackWait
// and then DELETEd (AllowDelete); a soft one never is; an API that gives no answer under hard pressure
// leads to the cgroup kill (AllowCgroupKill). Foresee runs the same ladder against an API whose answers
// are known (PDBRefuses, APIAccepts): the simulator runs it for every planned eviction, and IfRefused
// (the moves after a refusal) is what explain shows. carry.go holds the rules across a plan's actions
// (CarryOn, Contacted, KillAfter, KillUnlisted, UnlistedCandidate, Plan.WritesHeld).
//
// In flight (inflight.go) is one rule with one lifetime, InFlightRule (Config.InFlight, InFlightTTL): an
// eviction is in flight from its request until its pod leaves the pod list, a pod still listed and not
// terminating only for InFlightTTL. The State's flights, the ledger entries a restarted agent reads
// (Input.InFlight) and History.Prune all follow it; nothing else decides whether a pod is in flight.
//
// History (loop.go, avoid.go) is the node's memory of the agent's evictions and the rules that change it,
// pure like the rest: Record says whether an eviction closes an eviction loop (its pod was created after
// an earlier eviction of the same owner within LoopConfig.Window, and the owner has LoopEvictions
// evictions there) and starts the owner's avoidance of the node (Cooldown; LoopCooldown after a loop);
// AvoidBefore is the avoidance the ladder publishes before it evicts, Restore takes it back; Avoid keeps
// at most MaxEntries avoidances (those that end first go); Prune forgets ended avoidances and entries out
// of the window that are not in flight; AvoidanceAfter is what an eviction would do to its owner's avoidance, for explain. Only an
// Avoidable Workload is avoided. LedgerOf is the History's entries as NewInput reads them.
// internal/loopbreaker stores a History (the Node annotation, the avoidance ConfigMap) and decides
// nothing.
//
// NewInput (read.go) builds the Input from what a shell read (Read: the pods in any phase, the ledger's
// evictions, the reclaim estimate, the outcomes) and says what the read did not know; the agent, explain
// and the simulator all build their Input with it.
//
// Step never modifies its State or Input (State is a value; its fields are unexported and copied on
// write). The package has no I/O, clock, goroutines or logging (internal/archtest enforces it), so the
// agent, kubectl pressure explain (Input.Persisting: "if the pressure persisted") and the simulator run
// the same code on the same inputs and get the same answer. Every sort is a total order; map order never
// reaches a Plan.
package policy
