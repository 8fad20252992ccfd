// Package source turns a host into a signal.Snapshot. Node composes the readers (procfs for
// MemTotal, pids and node PSI; cgroupfs for the memory signals, pods and cgroup PSI; statfs for disks;
// podfs, optional, for each pod's local volumes and logs). ReadNode and ReadPods split a snapshot into
// its node-level and per-pod parts (the latter is most of its cost); Snapshot does both.
//
// Every read takes the observation time from its caller (the agent passes its injected clock's Now):
// nothing below the shell reads a clock. A reader that fails leaves its signals out of the snapshot and
// its error is joined into the returned error; the snapshot is still returned with what could be read.
// Absent is not zero.
package source
