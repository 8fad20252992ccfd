// Package chartinstall installs the Helm chart deploy/helm/pressure, from images built from this
// repository, onto the level-2 test node of package cluster, as users install it: a DaemonSet whose
// agent pod reads the node through the chart's read-only host mounts and reaches the API server
// with the ServiceAccount token the kubelet mounted.
//
// It serves the chart's own tests (test/deploy), the end-to-end test of the agent (test/e2e) and
// the agent benchmark (bench/agent), so each measures the agent as deployed, not a host process.
//
//   - DaemonImages builds pressure-agent and pressure-janitor (static) and writes their OCI image
//     tarballs with package images; Node.ImportImages or NodeOptions.Images puts them on the node.
//   - FindHelm returns the pinned helm of hack/install-helm.sh; Helm.Run runs it with a private
//     helm home.
//   - Install runs helm install with NodeValues (images never pulled, the test kubelet's
//     configuration file, non-recursive read-only mounts for containerd 1.6) and waits until the
//     agent pod on the node is Ready; Uninstall removes the release and waits for its pods.
//   - Agent reads the installed agent's log (its container log file on the node) and /metrics
//     (through the API server's pod proxy), and finds its process for CPU and RSS.
package chartinstall
