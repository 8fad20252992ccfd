// Package fileerr is the error of a bad input file: Error names the file, the line and column, the
// field's path and the value as written, so that every parser of the CLI (snapshots, scenarios)
// reports a problem the same way. Leaves flattens errors joined with errors.Join.
package fileerr
