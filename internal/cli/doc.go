// Package cli implements kubectl-pressure: a CLI and kubectl plugin whose subcommands (explain, snapshot,
// version) are thin clients of the decision core. Streams are injected (genericiooptions.IOStreams), so
// every command is testable in-process; flags follow kubectl plugin conventions (k8s.io/cli-runtime).
package cli
