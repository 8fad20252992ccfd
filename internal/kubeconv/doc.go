// Package kubeconv converts Kubernetes API types into the pure core types of pressure, with the
// kubelet's semantics (v1.34 to v1.37; the pinned v1.37 when the node's release is unknown):
//
//   - LoadKubeletConfig reads a KubeletConfiguration (JSON or YAML) either bare, as in a kubelet
//     config file, or wrapped as the kubelet's /configz endpoint serves it ({"kubeletconfig": {...}}).
//     KubeletConfig.ThresholdInput turns it into a threshold.Input; for /configz output, which is
//     the kubelet's effective configuration (defaults applied and merged), absent eviction fields
//     mean empty, not "use the defaults".
//   - Snapshot turns a stats/v1alpha1 Summary into a signal.Snapshot exactly as the kubelet's
//     makeSignalObservations does (a nil pointer gives no observation), plus per-pod stats keyed by
//     UID, PSI, and a heuristic filesystem layout.
//   - Candidate turns a v1.Pod and its stats into a rank.Candidate (requests as
//     GetResourceRequestQuantity, QoS as ComputePodQOS, criticality as IsCriticalPod).
//
// Functions are pure: no I/O beyond the io.Reader they are given, no clock, no logging.
package kubeconv
