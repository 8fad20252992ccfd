// Package deploy tests the Helm chart in deploy/helm/pressure against helm itself and the real
// kube-apiserver of package test/cluster:
//
//   - helm lint and helm template with the default values and with ci/all-values.yaml (every
//     option), and properties of the rendered manifests (read-only host mounts, no hostNetwork,
//     hostPID only with the cgroup-kill rung, every value documented in the chart README);
//   - a server-side dry-run apply of both renderings (level 1: etcd + kube-apiserver);
//   - RBAC: each component's ServiceAccount may do what its code calls and is refused the rest;
//   - the ValidatingAdmissionPolicies: with ServiceAccount tokens bound to a pod on each of two
//     nodes, the agent of node A may evict and delete pods on A and patch Node A, and is refused
//     on B; the janitor may delete only terminal pods.
//
// helm is built from the Go module proxy by hack/install-helm.sh (pinned version) into
// ${PRESSURE_CACHE:-$HOME/.cache/pressure}/bin. The package has only tests.
package deploy
