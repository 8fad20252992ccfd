// Package procfs reads the node-wide numbers the eviction signals need from a procfs tree: /proc/meminfo
// (MemTotal, the capacity of memory.available), /proc/loadavg (the task count behind pid.available),
// /proc/sys/kernel/pid_max and threads-max (its ceiling), /proc/pressure/* (PSI), /proc/vmstat (the
// refault counters of the reclaim estimate), /proc/<pid>/oom_score_adj, and a process's CPU time and
// memory from /proc/<pid>/stat and status (what the benchmarks measure the agent and the janitor by).
//
// Every kernel file has a parser over io.Reader (ParseMeminfo, ParseLoadavg, ParseSysctlUint, ParsePSI,
// ParseVmstat, ParseOOMScoreAdj, ParseProcessStat, ParseProcessStatus) and a thin method on Reader that opens the file below Reader.Root.
// Nothing here reads a clock: ObservePIDs and Pressure take the time of the observation from their
// caller. Absent is not zero: optional meminfo fields are pointers, and a file
// that cannot be read or parsed is an error naming the file, never a 0.
package procfs
