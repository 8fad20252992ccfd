// Package reclaim asks the kernel to reclaim a cgroup's memory without killing anything: the rung
// before eviction when the kubelet's working set counts page cache that the kernel could drop.
//
// On cgroup v2 it writes the byte count to memory.reclaim (Linux 5.19+) in chunks of Chunk bytes. The
// kernel's memory.reclaim loops inside one write until it has reclaimed the whole amount, retrying a
// pass that reclaimed nothing up to 16 times before it gives up with EAGAIN (a partial result, not a
// failure), and only a pass that reclaims nothing counts against those retries: one write can therefore
// stay in the kernel for a long time, above all under the test guest's TCG (a 16 MiB write on a cgroup of
// anonymous memory did not return within 3 minutes there). The loop is bounded three ways: the context
// (with Timeout) is checked between chunks and also interrupts a write in the kernel (the kernel loop
// returns EINTR when its thread has a signal pending: the write runs on a locked thread that is sent
// SIGURG, which the Go runtime ignores, until it returns; os.File's Write would retry the EINTR); a chunk
// that lowered memory.current by less than a sixteenth of itself stops the loop (what is left is not
// reclaimable, or is charged again as fast); and EAGAIN stops it.
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
// On v1 Timeout and the context are checked between the limit's steps; one resize is a blocking system
// call (the kernel's own retries are bounded there).
//
// Every call is bounded: at most MaxBytes, at most Timeout, at most once per MinInterval per cgroup, and
// refused while the cgroup thrashes (v2 memory.pressure "some" avg10 at or above MaxSomeAvg10, or the
// caller's Thrashing hook). Freed is measured from the cgroup's usage and memory.stat before and after.
// Writes go only to cgroups under Root.
//
// Pods is the agent's entry: it finds a pod's cgroup by UID among the cgroups source/cgroupfs lists
// under the node's pods cgroup, and reclaims there through a Reclaimer rooted at the pods cgroup.
package reclaim
