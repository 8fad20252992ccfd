// Package procfs reads the node-wide numbers the eviction signals need from a procfs tree: /proc/meminfo
// (MemTotal, the capacity of memory.available), /proc/loadavg (the task count behind pid.available),
// /proc/sys/kernel/pid_max and threads-max (its ceiling), and /proc/pressure/* (PSI).
//
// Every kernel file has a parser over io.Reader (ParseMeminfo, ParseLoadavg, ParsePSI) and a thin method
// on Reader that opens the file below Reader.Root. Nothing here reads a clock: Observe takes the time of
// the observation from its caller. Absent is not zero: optional meminfo fields are pointers, and a file
// that cannot be read or parsed is an error naming the file, never a 0.
package procfs
