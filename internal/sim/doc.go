// Package sim is a discrete-event simulator of node-pressure eviction on one node: it replays a
// World (a Model of workloads with usage ramps, or a Recording of a real node) through the kubelet's
// eviction manager alone (the node's release, v1.34 to v1.37; the pinned v1.37 for a Model), and
// through a node agent (the Agent seam; PolicyAgent drives pressure-agent's policy.Step on an input built by policy.NewInput, as the agent builds it, and each
// planned eviction through the agent's escalation ladder, policy.Foresee: a pod a PodDisruptionBudget
// protects (PodInfo.PDB) is refused by the simulated Eviction API, then DELETEd after the fallback wait
// under a hard threshold, or left running under a soft one; with the agent's loop rules, each carried-out
// eviction of a pod with an Avoidable owner starts or extends the owner's avoidance of the node as the
// ladder's policy.History rules say, escalated after an eviction loop, and a pod of an avoided owner that
// appears while the avoidance holds is kept off the node) with the kubelet behind it, and reports when
// each evicts whom.
//
// Simulate(World, Options) Result runs each run on a virtual clock: an event heap (total order: time,
// then kind, then insertion) of world samples (every Timing.Step: threshold crossings, the kubelet's
// memcg notifiers, the agent's poll, the plot), the kubelet's housekeeping syncs and cleanup checks,
// its notified syncs (each notifier's handler is busy while its sync kills a pod; the crossings of that
// time wait, at most two, and each makes a sync as soon as the handler is free: notify.go),
// the agent's syncs and the node status updates. Each kubelet sync is one decision.Step on memory
// measured at the sync and pod stats as cAdvisor's cache holds them (World.Cached); each agent sync is
// one Agent.Step on fresh reads (World.Usage; for a Recording with local samples, Recording.Local, the
// agent's own cgroup reads, the last at or before the sync, memory signals included). A run applies its own evictions to the world: a pod
// evicted in the run stops counting when its memory is freed; in a Recording, a pod the recorded
// kubelet evicted that the run did not evict keeps counting. Text, JSON and Plot (SVG) render a Result.
//
// The package is pure: no I/O, clock, goroutines or logging (internal/archtest enforces it). Random
// choices (cAdvisor's measurement times of a Model) come from the *rand.Rand given to Model.World, so
// the same seed gives the same Result, byte for byte in every format.
package sim
