// Package agent is the shell of pressure-agent: it owns the clock, the goroutines, the retries, the
// logging and the metrics, and carries out what the pure policy (internal/policy) decides.
//
// One decision path. Agent.sync is the only place that runs the policy. It runs on the periodic sync (default
// every 10 s) and on every wake-up from the notifiers (package notify: memcg threshold eventfd, PSI
// trigger, memory.events inotify, fast poll); notifiers only trigger, they never decide. A sync:
//
//  1. reads the node (source.Node: cgroupfs, procfs, statfs) stamped with the injected clock, so the
//     decision runs on fresh node-read stats, never on the kubelet's cached per-pod stats;
//  2. lists the pods bound to the node from an informer (field selector spec.nodeName), turns each
//     active pod into a policy.Pod (kubeconv.Candidate and its deletion timestamp), and reads the
//     ledger's unsettled evictions (what an earlier run of the agent carried out; the policy's in-flight
//     rule says which still count);
//  3. runs policy.Step with the outcomes of the previous plan: thresholds (the kubelet's, or raised by
//     the headroom), the pressure episode, bounded in-flight credit, decision.Step, the victims (to a
//     target, or the kubelet's one pod), the minute limit, PDB pauses, the API backoff and the trend
//     kill, and gets a Plan;
//  4. carries the plan out: the wanted taint (Breaker, before the evictions), each eviction through an
//     evictLadder (actuate.Ladder, which makes the calls and waits policy.Escalation chooses: Eviction
//     API, PDB fallback wait, DELETE, cgroup kill), each planned kill through an
//     actuate.PodKiller (internal/cgroupkill) right after the pod's eviction request; every action's
//     outcome (and whether its API calls got an answer) is kept for the next step; once the API is
//     found unreachable the rest of the plan's evictions are not attempted;
//  5. reports: node events when pressure starts and ends, one structured log line per eviction, and
//     Prometheus metrics on a registry passed in; the notifiers are re-armed at the plan's watched
//     thresholds.
//
// Faults: when the API is unreachable the agent keeps observing and updating metrics; the policy backs
// off exponentially before it asks the API again and never queues evictions (each sync decides afresh).
// A restarted agent finds its in-flight evictions in the ledger persisted on the Node object and in the
// pods' deletion timestamps, and does not request them again. Nothing waits for the API server at start:
// the loop runs on what the node shows (unlisted.go) while the pod list, the ledger and /configz come in.
// Every API call but a watch has its own deadline (apitimeout.go). RunWithOptions rejects a bad
// configuration before it touches anything, and its preflight (preflight.go) a kubelet configuration
// file that is missing, empty or a directory: it logs the value to set, writes a KubeletConfigNotFound
// Event on the Node and returns ErrKubeletFileMissing, rather than run on thresholds it cannot know. The
// REST configuration and the /metrics and probe servers are internal/daemon's, the command-line flags
// shared with pressure-janitor internal/config/cmdline's; health.go says what
// /healthz and /readyz mean here. The configuration (flags, file, defaults, validation) is resolved by
// internal/config/agent alone; FromConfig maps it onto Config and this package writes no default.
//
// The escalation of one eviction (avoidance settle, PDB fallback wait, DELETE, cgroup kill) is the
// policy's (policy.Escalation); actuate.Ladder only carries out its moves. So is in flight, one rule
// with one lifetime (policy.InFlightRule): the ledger stores, the policy decides. So are the rules
// across a plan's actions: the rest of the evictions wait once the API is found unavailable
// (policy.CarryOn, on what the attempts learned of the API: policy.Contacted), a kill is skipped when
// the eviction ended the pod (policy.KillAfter), an unlisted pod is killed only under a hard threshold
// (policy.KillUnlisted), writes wait out the API backoff (Plan.WritesHeld), and which pods found only
// in the cgroup tree are unlisted candidates (policy.UnlistedCandidate; unlisted.go only reads the
// cgroup tree and the processes' oom_score_adj). What is still decided outside internal/policy is
// listed in docs/decisions/0004-policy-owns-the-lifecycle.md.
//
// Time comes from an injected clock.WithTicker; the package never calls time.Now or time.Sleep.
package agent
