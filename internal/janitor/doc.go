// Package janitor is pressure-janitor: a controller that deletes terminal pods, by default the
// Failed/Evicted pods the kubelet leaves behind after a node-pressure eviction or an admission
// rejection, once a TTL measured from the eviction time has passed, keeping the newest N per owner
// and writing the evidence (an Event on the owning workload and a structured log line) first.
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
//   - Controller (the shell) watches pods with a client-go informer, runs Select on every change and
//     again at the next TTL expiry (no polling), writes evidence, then deletes with UID and
//     resourceVersion preconditions through a token-bucket rate limiter. Run adds leader election
//     (a coordination.k8s.io Lease), /metrics, /healthz, /readyz and graceful shutdown.
//
// Time comes from an injected k8s.io/utils/clock; metrics go to a registry passed in.
package janitor
