// Package agent is the shell of pressure-agent: it owns the clock, the goroutines, the retries and the
// logging, and turns the node sources and the decision core into actions.
//
// One decision path. Agent.sync is the only place that decides. It runs on the periodic sync (default
// every 10 s) and on every wake-up from the notifiers (package notify: memcg threshold eventfd, PSI
// trigger, memory.events inotify, fast poll); notifiers only trigger, they never decide. A sync:
//
//  1. reads the node (source.Node: cgroupfs, procfs, statfs) stamped with the injected clock, so the
//     decision runs on fresh node-read stats, never on the kubelet's cached per-pod stats;
//  2. lists the pods bound to the node from an informer (field selector spec.nodeName) and turns each
//     active pod into a rank.Candidate with kubeconv;
//  3. runs decision.Step with the thresholds of the policy:
//     - PolicyPressure (default): the kubelet's thresholds, hard ones raised by a headroom
//     (Headroom), minimum reclaim applied, pods already terminating excluded from the victims and their
//     usage counted as released; it evicts to a target (enough pods, in rank order, to bring the signal
//     back above threshold + minimum reclaim), capped per sync and by a token bucket;
//     - PolicyKubelet: exactly the kubelet's thresholds and the kubelet's one pod per sync;
//  4. carries out each eviction through an evictLadder (actuate.Ladder: Eviction API, PDB fallback,
//     cgroup kill), and, when the usage trend reaches the pods cgroup limit before an eviction could
//     complete, SIGKILLs the chosen pod's processes right after the request (actuate.PodKiller);
//  5. reports: node events when pressure starts and ends, the pressure taint (Breaker: only while a
//     threshold is met, plus a short hysteresis), the ledger and its avoidances (each new avoidance is
//     published by the ladder before the eviction; the Breaker expires them), one structured log line
//     per eviction, and Prometheus metrics on a registry passed in.
//
// Faults: when the API is unreachable the agent keeps observing and updating metrics, backs off
// exponentially before it asks the API again, and never queues evictions (each sync decides afresh). A
// restarted agent finds its in-flight evictions in the ledger persisted on the Node object and in the
// pods' deletion timestamps, and does not request them again. Run rejects a bad configuration before it
// touches anything.
//
// Time comes from an injected clock.WithTicker; the package never calls time.Now or time.Sleep.
package agent
