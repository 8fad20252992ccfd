// Package reclaim asks the kernel to reclaim a cgroup's memory without killing anything: the rung
// before eviction when the kubelet's working set counts page cache that the kernel could drop.
//
// On cgroup v2 it writes the byte count to memory.reclaim (Linux 5.19+), in chunks so a timeout or a
// cancelled context stops it between writes; EAGAIN means the kernel could not reclaim all of a chunk,
// a partial result and not a failure.
//
// cgroup v1 has no memory.reclaim. memory.force_empty reclaims while tasks run on current kernels
// (measured on 6.18: 300 MiB of page cache dropped in 8 ms with the reading process alive), but it
// cannot be sized: it reclaims everything it can, so the pod refaults its whole cache, and with swap it
// swaps the pod's anonymous memory too. The v1 mechanism here is therefore a sized one: lower
// memory.limit_in_bytes step by step towards usage - bytes, which makes the kernel reclaim inside the
// cgroup (a resize never invokes the OOM killer: it returns EBUSY when it cannot reclaim), and restore
// the previous limit afterwards, always: on success, on error, on timeout and on a cancelled context.
// The lowered limit never goes below rss + unevictable + Margin, so a task that allocates during the
// window finds at least Margin of room before it would meet the limit.
//
// Timeout and the context are checked between kernel writes only: one write is a blocking system call.
// In the test/vm guest (TCG, no swap) a 16 MiB write to memory.reclaim of a cgroup holding only anonymous
// memory did not return within 3 minutes (TestReclaimRealV2AnonymousMemoryIsAPartialResultNotAFailure,
// not yet in test/vm's guest suites for that reason): before the agent calls this on v2, the write must
// be interruptible (the kernel returns EINTR on a pending signal) or kept to a small Chunk.
//
// Every call is bounded: at most MaxBytes, at most Timeout, at most once per MinInterval per cgroup, and
// refused while the cgroup thrashes (v2 memory.pressure "some" avg10 at or above MaxSomeAvg10, or the
// caller's Thrashing hook). Freed is measured from the cgroup's usage and memory.stat before and after.
// Writes go only to cgroups under Root.
package reclaim
