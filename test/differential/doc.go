// Package differential compares the decision core (internal/decision via internal/kubeconv) with the
// unmodified kubelet v1.36.3 eviction manager on generated cases.
//
// The kubelet side is test/tools/cmd/kubelet-eviction-oracle, built from the separate test/tools
// module (this module must not import k8s.io/kubernetes) and cached under
// ${PRESSURE_CACHE:-$HOME/.cache/pressure}/oracle, keyed by test/tools/go.mod, go.sum and the
// oracle's source. Cases are generated with a seeded math/rand: random pods of every QoS class with
// random requests, limits, priorities and usage (missing stats, critical, static and mirror pods
// included), local ephemeral-storage limits (container, init, sidecar, overhead, pod-level, emptyDir
// sizeLimit; decimal, fractional and zero quantities) with usage at their boundaries, random hard and
// soft thresholds (quantities, percentages, minimum reclaim), memory, disk and PID pressure on every
// filesystem layout, and several steps of advancing time (grace periods,
// transition period, stale stats, summary errors, node-level reclaim). Both sides see the same
// KubeletConfiguration, Summary and pods; the test compares the victims, the status and event
// messages byte for byte, event annotations, DisruptionTarget conditions, kill grace overrides,
// eviction metric labels, node events, garbage-collection calls, node conditions and admission, and
// that decision.PredictOrder's local-storage group (what explain lists first) is the kubelet's.
//
// Where the kubelet is nondeterministic (which of several acted-on thresholds it handles first, pods
// tied on every ranking key) any of its possible answers is accepted; see kubelet-fidelity.md. The
// package has only tests.
package differential
