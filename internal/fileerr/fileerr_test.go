package fileerr

import (
	"errors"
	"testing"
)

func TestErrorNamesWhatIsKnown(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  *Error
		want string
	}{
		{"everything", &Error{File: "s.yaml", Line: 3, Column: 7, Field: "pods[0].usage", Value: "8Gb", Err: errors.New("bad")},
			`s.yaml: line 3, column 7: field pods[0].usage: value "8Gb": bad`},
		{"the file alone", &Error{File: "node.json", Err: errors.New("empty file")}, "node.json: empty file"},
		{"a field without a line", &Error{File: "node.json", Field: "metadata.name", Err: errors.New("missing")},
			"node.json: field metadata.name: missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLeavesFlattensJoinedErrors(t *testing.T) {
	a, b, c := errors.New("a"), errors.New("b"), errors.New("c")
	got := Leaves(errors.Join(a, errors.Join(b, c)))
	if len(got) != 3 || got[0] != a || got[1] != b || got[2] != c {
		t.Errorf("leaves %v, want a b c", got)
	}
	if got := Leaves(a); len(got) != 1 || got[0] != a {
		t.Errorf("leaves of a single error %v", got)
	}
}
