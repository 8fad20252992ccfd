// Package soak is the seeded soak driver of issue 32: episodes of random pressure and at most one fault
// each, run on the level-2 test node (package test/cluster) with the agent and the janitor installed by
// the chart with its default values and dryRun=false (chartinstall.NodeValues), and invariants checked
// after every episode and over the run.
//
//   - Draw (plan.go) turns a seed and an episode number into an episode's Plan: a mix of the stress
//     image's workloads (memory hogs at a rate, page-cache readers, thrashers, fork loops, emptyDir
//     writers, inode creators), steady pods of each QoS class, a critical pod, a PDB-protected
//     Deployment and at most one fault at a random moment. Episode e of seed S draws from
//     rand.NewPCG(S, e) alone, so one episode reruns alone (SOAK_FIRST=e SOAK_EPISODES=1).
//   - The checks (invariants.go, resources.go) are pure functions over what an episode observed (items
//     1 to 7 of the issue; 2, simulate on the episode's recording, on episodes without a fault); each
//     returns Violations naming the invariant of the issue they belong to.
//   - TestSoak (soak_test.go) runs the episodes. Without SOAK_EPISODES it is the short version that
//     `make test` runs: 3 episodes, one fault. `make soak EPISODES=N SEED=S` runs a longer one.
//     A failing episode prints its seed and keeps its artefacts directory.
//
// docs/soak.md says what ran and how to run it for a day.
package soak
