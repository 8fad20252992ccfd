package parse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ErrMissing reports that a required key or value is not in a file.
var ErrMissing = errors.New("missing")

// ErrSyntax reports a line that does not have the expected shape.
var ErrSyntax = errors.New("unexpected format")

// ErrEmpty reports a file with no content where a value was expected.
var ErrEmpty = errors.New("empty file")

// Error names the file, the 1-based line (0 when the error is not tied to a line) and the offending
// value of a kernel file that could not be parsed.
type Error struct {
	Path  string
	Line  int
	Value string
	Err   error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("parse %s value %q: %v", e.Path, e.Value, e.Err)
	}
	return fmt.Sprintf("parse %s line %d value %q: %v", e.Path, e.Line, e.Value, e.Err)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// ParseError is the name the house style uses for Error.
type ParseError = Error

// Uint parses a non-negative decimal integer.
func Uint(s string) (uint64, error) {
	return strconv.ParseUint(s, 10, 64)
}

// UintOrMax parses a cgroup v2 limit: "max" means unlimited and yields math.MaxUint64.
func UintOrMax(s string) (uint64, error) {
	if s == "max" {
		return math.MaxUint64, nil
	}
	return Uint(s)
}

// SingleValue reads a file holding one value on its first line, such as memory.current or
// /proc/sys/kernel/pid_max, and returns it trimmed. An empty file is ErrEmpty.
func SingleValue(r io.Reader, path string) (string, error) {
	sc := bufio.NewScanner(r)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return "", fmt.Errorf("read %s: %w", path, err)
		}
		return "", &Error{Path: path, Line: 1, Err: ErrEmpty}
	}
	v := strings.TrimSpace(sc.Text())
	if v == "" {
		return "", &Error{Path: path, Line: 1, Err: ErrEmpty}
	}
	return v, nil
}

// SingleUint reads a file holding one non-negative integer.
func SingleUint(r io.Reader, path string) (uint64, error) {
	return singleWith(r, path, Uint)
}

// SingleUintOrMax reads a file holding one integer or "max" (math.MaxUint64).
func SingleUintOrMax(r io.Reader, path string) (uint64, error) {
	return singleWith(r, path, UintOrMax)
}

func singleWith(r io.Reader, path string, conv func(string) (uint64, error)) (uint64, error) {
	s, err := SingleValue(r, path)
	if err != nil {
		return 0, err
	}
	v, err := conv(s)
	if err != nil {
		return 0, &Error{Path: path, Line: 1, Value: s, Err: err}
	}
	return v, nil
}

// KeyValues parses a flat "key value" file (memory.stat, memory.events, cgroup v1 memory.stat) into a map.
// Every line must hold exactly two fields and the value must be a non-negative integer. A repeated key is
// an error, since the kernel never writes one.
func KeyValues(r io.Reader, path string) (map[string]uint64, error) {
	out := make(map[string]uint64)
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) != 2 {
			return nil, &Error{Path: path, Line: line, Value: text, Err: fmt.Errorf("want \"key value\": %w", ErrSyntax)}
		}
		v, err := Uint(fields[1])
		if err != nil {
			return nil, &Error{Path: path, Line: line, Value: text, Err: err}
		}
		if _, dup := out[fields[0]]; dup {
			return nil, &Error{Path: path, Line: line, Value: text, Err: fmt.Errorf("duplicate key %q: %w", fields[0], ErrSyntax)}
		}
		out[fields[0]] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// Lines counts the non-empty lines of r, e.g. the PIDs in cgroup.procs.
func Lines(r io.Reader, path string) (uint64, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	return CountLines(b), nil
}

// CountLines counts the lines of b that hold more than white space (Lines without a reader).
func CountLines(b []byte) uint64 {
	var n uint64
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
	return n
}
