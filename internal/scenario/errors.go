package scenario

import (
	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-pressure/pressure/internal/fileerr"
)

// Error is a problem with one value of a scenario file: the file, the line and column, the field's
// path ("pods[1].usage.rate") and the value as written.
type Error = fileerr.Error

// at returns an Error located at the node n.
func at(file, field string, n *yaml.Node, err error) *Error {
	e := &Error{File: file, Field: field, Err: err}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
		if n.Kind == yaml.ScalarNode {
			e.Value = n.Value
		}
	}
	return e
}
