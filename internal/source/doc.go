// Package source turns a host into a signal.Snapshot. Node composes the three readers (procfs for
// MemTotal, pids and node PSI; cgroupfs for the memory signals, pods and cgroup PSI; statfs for disks).
//
// Snapshot takes the observation time from its caller (the agent passes time.Now()): nothing below the
// shell reads a clock. A reader that fails leaves its signals out of the snapshot and its error is
// joined into the returned error; the snapshot is still returned with what could be read. Absent is
// not zero.
package source
