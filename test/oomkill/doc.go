// Package oomkill reads the kernel's OOM kills from its log (dmesg) and attributes each to the memory
// cgroup of the killed task, so a level-2 test counts only the kills inside its node's pods cgroup and
// not an OOM kill elsewhere on the host. On cgroup v1 the pods cgroup's own memory.oom_control oom_kill
// stays 0 when the kill is in a child cgroup (docs: real-cluster-notes.md), so its counters cannot say.
package oomkill
