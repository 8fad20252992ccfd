// Package cgrouptest creates real memory cgroups, on the host's cgroup v1 memory controller or (MkdirV2,
// V2Root) on the cgroup2 hierarchy of the test/vm guest, and runs a real child process (a "hog") in them
// that allocates, frees and ramps memory on command. Tests and the detection benchmark use it to drive
// the kernel, not a model of it.
//
// The hog is the calling binary re-executed with HogEnv set: a test package's TestMain (or the
// benchmark's main) must call RunHogIfRequested first thing.
package cgrouptest
