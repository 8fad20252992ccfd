// Package cluster runs real Kubernetes components on this machine for integration and
// end-to-end tests.
//
// Level 1 (StartControlPlane): etcd, kube-apiserver (RBAC and Node authorization, service
// account tokens), kube-controller-manager and kube-scheduler, all on 127.0.0.1 on free ports
// with every file under one state directory, so several test packages can each run their own.
//
// Level 2 (StartNode): containerd, a bridge CNI network and a kubelet registered with a
// ControlPlane. Containerd, libcni and the kubelet use some fixed paths (/run/containerd,
// /var/lib/cni, /var/lib/kubelet/device-plugins, /var/log/containers), so only one node runs
// on a machine at a time: StartNode holds an exclusive flock on NodeLockPath for the node's
// lifetime, and concurrent callers wait. Node.RestartContainerd and Node.RestartKubelet stop one of
// them and start it again as StartNode did (same command line, config, log and inherited lock),
// waiting until it is ready as at start; the running pods survive both.
//
// Every process is started in its own session, tracked by PID (and start time, so a reused
// PID is never signalled), and stopped by that PID: SIGTERM, then SIGKILL after a timeout.
// Process output goes to <name>.log in the state directory; start errors quote its tail.
//
// The same code serves tests (the caller's lifetime; see package clustertest) and the
// detached cluster of hack/cluster.sh (cmd/cluster). Every control plane records its PIDs in
// <dir>/state.json (State), so `hack/cluster.sh down --state <dir>` stops a leaked one; the
// node records what to clean in /run/pressure-node.json, which the next StartNode (or down)
// uses after a crash. Shims are found by the socket containerd recorded for them or by their
// "-address <our containerd socket>" argument, never by program name.
//
// The binaries come from hack/build-k8s.sh (see Binaries); the node dependencies from
// hack/install-node-deps.sh.
package cluster
