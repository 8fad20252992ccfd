// Package cgroupkill SIGKILLs the processes of a pod's cgroup on the node: the agent's last resort
// when the API server cannot be reached under hard pressure, or when the memory trend says the OOM
// killer would strike before an eviction completes. It finds the pod's cgroup through
// source/cgroupfs (never from a path built out of the UID), kills through cgroup.kill where the kernel
// has it and otherwise through pidfds, so a PID reused by another process is never signalled. It never
// talks to the API server (internal/archtest enforces it).
package cgroupkill
