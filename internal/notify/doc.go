// Package notify wakes the agent up early when memory may have crossed a threshold. Notifiers trigger,
// they never decide: each one sends struct{} on a channel (non-blocking, so wake-ups coalesce while the
// agent is busy) and the agent runs its one decision path, exactly as the kubelet's
// CgroupNotifier.Start(eventCh chan<- struct{}) does.
//
// Mechanisms:
//   - MemcgThreshold: cgroup v1 memory threshold notifications (memory.usage_in_bytes + eventfd written
//     to cgroup.event_control). The kernel signals every crossing, upward and downward. SetThreshold
//     re-arms it as usage changes; UsageThreshold is the kubelet's formula for the value.
//   - PSITrigger: a pressure-stall trigger written to a PSI file (cgroup2 memory.pressure or
//     /proc/pressure/memory), waited on for POLLPRI.
//   - FileWatch: inotify IN_MODIFY on a file such as cgroup v2 memory.events (high/max/oom counters).
//   - Poller: the fallback that reads a value every interval and signals threshold crossings and large
//     changes.
//
// The constructors (NewMemcgThreshold, ArmPSI, WatchFile) fail when the host lacks the mechanism; the
// agent arms the ones its configuration enables and reports which did not arm and why
// (internal/agent, wakeup.go). Every Run method blocks until its context is cancelled, then releases its
// file descriptors and returns nil.
package notify
