package fileerr

import (
	"fmt"
	"strings"
)

// Error is a problem with one file (or one live endpoint): the file, the line and column (1-based;
// 0 when unknown), the field's path ("status.capacity.memory", "pods[1].usage.rate") and the value as
// written, when known.
type Error struct {
	// File is the file path or the endpoint.
	File         string
	Line, Column int
	Field        string
	Value        string
	Err          error
}

// Error renders "FILE: line L, column C: field F: value "V": ERR", leaving out what is unknown.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ": line %d, column %d", e.Line, e.Column)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %s", e.Field)
	}
	if e.Value != "" {
		fmt.Fprintf(&b, ": value %q", e.Value)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Leaves returns the errors joined in err (errors.Join, recursively), in order; err itself when it
// joins nothing.
func Leaves(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, Leaves(e)...)
		}
		return out
	}
	return []error{err}
}
