// Package cli implements kubectl-pressure: a CLI and kubectl plugin whose subcommands are thin clients
// of the pure packages: explain (internal/explain), nodes (a fleet overview), snapshot and record (the
// inputs explain and simulate read offline), simulate (internal/scenario, internal/sim), why
// (internal/why, with the janitor's evidence read through internal/evidence) and version. Streams are
// injected (genericiooptions.IOStreams), so every command is testable in-process; flags follow kubectl
// plugin conventions (k8s.io/cli-runtime).
package cli
