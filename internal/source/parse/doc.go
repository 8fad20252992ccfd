// Package parse holds the pieces every kernel-file parser in internal/source shares: the typed ParseError
// that names the file, the line and the value, and small line-oriented helpers for "key value" files
// (memory.stat, memory.events) and single-number files (memory.current, pid_max).
//
// Parsers here read from an io.Reader, or (bytes.go: SingleUintBytes, PickKeyValues) from the bytes of a
// file a caller re-reads many times a second, with the same values and errors and without allocating.
// They never open files; the path they are given is only used in
// errors. Absent is not zero: a helper reports a missing key with ok=false or ErrMissing, never with 0.
package parse
