// Package e2edisk runs pressure-agent against real disk pressure: the package's node (test/cluster,
// level 2) has its kubelet root dir on a small loop-mounted ext4 filesystem (cluster.LoopFS), so
// nodefs is a dedicated filesystem of 256 MiB, separate from containerd's root (a dedicated imagefs).
// Pods write into their emptyDir volumes with the stress image; the agent runs in the test process,
// or is installed with the chart (test/chartinstall, agent.podDiskUsage); explain --local runs in the
// test process too, as on the node.
package e2edisk
