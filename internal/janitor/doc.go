// Package janitor is pressure-janitor: a controller that deletes terminal pods, by default the
// Failed/Evicted pods the kubelet leaves behind after a node-pressure eviction or an admission
// rejection, once a TTL measured from the eviction time has passed, keeping the newest N per owner
// and keeping the evidence (a structured log line per pod before its delete, an aggregate Event on
// the owning workload after).
//
// The package has a pure core and a shell:
//
//   - FromPod converts a v1.Pod into a PodInfo; Select(pods, now, Policy) decides, without I/O or
//     clock, what to do with each pod (Delete, Wait until a time, Skip with a reason) and orders the
//     result deterministically (deletions podgc-like: evicted first, then oldest eviction, then
//     creation, namespace, name, UID).
//   - The eviction time is the DisruptionTarget condition's lastTransitionTime, else the latest
//     container termination, else the first time the janitor saw the pod terminal (remembered in the
//     annotation AnnotationTerminalSince). Never the pod's start time.
//   - Controller (the shell) lists only deletable pods (terminal phase, namespaces and label selector
//     filtered by the API server) into a slim cache (cachedPod, about 0.4 KB a pod), and works a
//     client-go work queue: a pod change enqueues a decision for the pod (or its owner's pods when
//     keep-per-owner applies); due pods become deletion items keyed by UID and resourceVersion,
//     waiting ones come back at their TTL expiry from a min-heap on the injected clock (wakeups; no
//     polling, no passes). Deletes carry UID and resourceVersion preconditions and pass a token
//     bucket. The evidence is a log line per pod before its delete and one aggregate Event per
//     owner and minute after (aggregator; the Event's format is internal/evidence's). In a dry run the
//     delete is sent with dryRun=All (the API server checks it and persists nothing), nothing is
//     annotated, and the same Events report what would have been deleted (evidence.EventReasonDryRun,
//     evidence.DryRunEventName). Run adds leader election (a coordination.k8s.io Lease), /metrics,
//     /healthz, /readyz and graceful shutdown (the servers and REST configuration are internal/daemon's, the
//     common flags internal/config/cmdline's).
//
// Time comes from an injected k8s.io/utils/clock; metrics go to a registry passed in.
package janitor
