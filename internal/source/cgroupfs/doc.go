// Package cgroupfs reads memory numbers from the cgroup filesystem and turns them into the kubelet's
// memory signals and per-pod usage.
//
// Detect finds the cgroup version (statfs magic of the root, then the files present), where the memory
// controller and the cgroup2 (PSI) hierarchy live, and the kubelet's cgroup driver (cgroupfs "kubepods"
// or systemd "kubepods.slice"). A Reader then computes, with the kubelet's formulas
// (pkg/kubelet/stats, cAdvisor setMemoryStats):
//
//   - memory.available = MemTotal − (root usage − root inactive_file), capacity MemTotal;
//   - allocatableMemory.available = pods-cgroup limit − pods working set, absent when unlimited (> 2^62);
//   - per-pod working set and process count, keyed by pod UID;
//   - PSI of the pods cgroup where the cgroup2 memory controller exists.
//
// cgroup v1 usage is memory.usage_in_bytes and inactive is total_inactive_file of memory.stat; cgroup v2
// usage is memory.current and inactive is inactive_file, except for the v2 root, which has no
// memory.current: its usage is anon + file of the root memory.stat (runc's emulation).
//
// A Sampler gives the two memory signals for a caller that reads them many times a second (the agent's
// adaptive poll): it keeps the cgroup files open, re-reads them with pread at offset 0 (the kernel
// generates a cgroup file anew for a read at offset 0) and does not allocate.
//
// Parsers read from io.Reader, or from the bytes of a file read whole where a read is repeated, and report a *parse.Error naming the file, line and value. Absent is not
// zero: a file that cannot be read is an error, and a signal that cannot be computed has no observation.
// Nothing here reads a clock; callers pass the time of the observation.
package cgroupfs
