// Package cgrouptest creates real cgroup v1 memory cgroups and runs a real child process (a "hog") in
// them that allocates, frees and ramps memory on command. Tests and the detection benchmark use it to
// drive the kernel, not a model of it.
//
// The hog is the calling binary re-executed with HogEnv set: a test package's TestMain (or the
// benchmark's main) must call RunHogIfRequested first thing.
package cgrouptest
