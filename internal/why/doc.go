// Package why answers "who killed my pod, and why that one": Decide takes the evidence the CLI
// collected about one pod (its status if it still exists, the Events on it, on its node and on its
// owner, the janitor's evidence record (internal/evidence), the agent's ledger, the node's kubelet configuration and the
// pods on the node) and returns a Verdict: the cause, the confidence, every fact that supports it,
// and for evictions the threshold and allocatable math, the ranking re-run with the decision core,
// and what would have prevented it.
//
// Pure: no I/O, no clock (Evidence.Now is the reference time), no goroutines. The collection from the
// API lives in internal/cli (why.go).
package why
