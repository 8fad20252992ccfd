// Package differential compares the decision core (internal/decision via internal/kubeconv) with the
// unmodified kubelet eviction manager of every supported release (v1.34.4, v1.35.4, v1.36.3, v1.37.2)
// on generated cases, the core following each release's decision.Semantics.
//
// The kubelet side is test/tools/cmd/kubelet-eviction-oracle, built once per release from a separate
// module (this module must not import k8s.io/kubernetes): test/tools for the pinned v1.37.2 and
// test/tools/oracle/v1.MINOR for the others (release_test.go). Each build is cached under
// ${PRESSURE_CACHE:-$HOME/.cache/pressure}/oracle/kubelet-eviction-oracle-VERSION-KEY, keyed by its
// module's go.mod and go.sum and the source files that release's build tags include. Every release
// gets the same random cases plus the version families of genversion_test.go (sidecar
// ephemeral-storage limits, memory-backed emptyDir sizeLimits with
// InPlacePodVerticalScalingMemoryBackedVolumes off and on, soft-eviction grace with
// AllowOverwriteTerminationGracePeriodSeconds off and on), and the kubelets' own answers must show
// each of those differences. Cases are generated with a seeded math/rand: random pods of every QoS
// class with random requests, limits, priorities and usage (missing stats, critical, static and
// mirror pods included), local ephemeral-storage limits (container, init, sidecar, overhead, pod-level, emptyDir
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
