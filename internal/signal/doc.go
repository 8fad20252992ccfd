// Package signal is the vocabulary shared by every part of pressure: the eviction signals the kubelet
// knows ("memory.available", "nodefs.inodesFree", ...), one Observation per signal (available, capacity,
// the time the value was measured and where it came from), per-pod usage (PodStats) and pressure-stall
// information (PSI).
//
// The package is pure: it holds data types and small helpers, performs no I/O and never reads a clock.
// Absent is not zero: a signal that could not be observed has no entry in Snapshot.Observations, and
// optional per-pod values are pointers.
package signal
