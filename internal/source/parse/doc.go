// Package parse holds the pieces every kernel-file parser in internal/source shares: the typed ParseError
// that names the file, the line and the value, and small line-oriented helpers for "key value" files
// (memory.stat, memory.events) and single-number files (memory.current, pid_max).
//
// Parsers here read from an io.Reader and never open files; the path they are given is only used in
// errors. Absent is not zero: a helper reports a missing key with ok=false or ErrMissing, never with 0.
package parse
