package parse

// Parsers over the bytes of a file already read whole, for a caller that reads the same small kernel
// files many times a second (the agent's adaptive poll) and must not allocate for each read. Each gives
// the values and errors its io.Reader counterpart gives, for any file whose first line (SingleUintBytes)
// or every line (PickKeyValues) is shorter than bufio.MaxScanTokenSize; kernel files always are.

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// SingleUintBytes is SingleUint over b.
func SingleUintBytes(b []byte, path string) (uint64, error) {
	return singleBytes(b, path, false)
}

// SingleUintOrMaxBytes is SingleUintOrMax over b.
func SingleUintOrMaxBytes(b []byte, path string) (uint64, error) {
	return singleBytes(b, path, true)
}

func singleBytes(b []byte, path string, orMax bool) (uint64, error) {
	line, _ := nextLine(b)
	v := bytes.TrimSpace(line)
	if len(v) == 0 {
		return 0, &Error{Path: path, Line: 1, Err: ErrEmpty}
	}
	if orMax && string(v) == "max" {
		return 1<<64 - 1, nil
	}
	n, err := uintBytes(v)
	if err != nil {
		return 0, &Error{Path: path, Line: 1, Value: string(v), Err: err}
	}
	return n, nil
}

// PickKeyValues reads the values of keys from a flat "key value" file held in b (memory.stat), as
// KeyValues gives them, without building a map: vals[i] receives the value of keys[i] (len(vals) ≥
// len(keys), at most 64 keys), and bit i of found is set when the file has keys[i]. A line of one of
// keys is checked as KeyValues checks it (two fields, an unsigned value, no repeat) and fails with the
// same error; the lines of other keys are not parsed, so a malformed one is no error here where
// KeyValues rejects the whole file.
func PickKeyValues(b []byte, path string, keys []string, vals []uint64) (found uint64, err error) {
	for line := 1; len(b) > 0; line++ {
		var text []byte
		text, b = nextLine(b)
		i := keyIndex(text, keys)
		if i < 0 {
			continue
		}
		v, err := pickValue(text, path, line, keys[i], found&(1<<i) != 0)
		if err != nil {
			return 0, err
		}
		vals[i], found = v, found|1<<i
	}
	return found, nil
}

// pickValue is the value of a line whose first field is key, with KeyValues' errors.
func pickValue(text []byte, path string, line int, key string, dup bool) (uint64, error) {
	value, ok := secondField(text)
	if !ok {
		return 0, &Error{Path: path, Line: line, Value: string(text), Err: fmt.Errorf("want \"key value\": %w", ErrSyntax)}
	}
	v, err := uintBytes(value)
	if err != nil {
		return 0, &Error{Path: path, Line: line, Value: string(text), Err: err}
	}
	if dup {
		return 0, &Error{Path: path, Line: line, Value: string(text), Err: fmt.Errorf("duplicate key %q: %w", key, ErrSyntax)}
	}
	return v, nil
}

// nextLine splits b after its first line as bufio.ScanLines does: the line without its "\n" and a
// final "\r".
func nextLine(b []byte) (line, rest []byte) {
	line = b
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		line, rest = b[:i], b[i+1:]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, rest
}

// keyIndex is the index in keys of the first field of text, or -1 (also for a blank line).
func keyIndex(text []byte, keys []string) int {
	f, ok := fields(text, 0)
	if !ok || len(f) == 0 {
		return -1
	}
	for i, k := range keys {
		if string(f) == k {
			return i
		}
	}
	return -1
}

// secondField is the second of exactly two fields of text (strings.Fields' split), or false.
func secondField(text []byte) ([]byte, bool) {
	f, ok := fields(text, 1)
	if !ok || len(f) == 0 {
		return nil, false
	}
	if third, _ := fields(text, 2); len(third) > 0 {
		return nil, false
	}
	return f, true
}

// fields returns field n (0-based, split at white space as bytes.Fields splits) of text, empty when
// text has fewer fields. A line with bytes beyond ASCII is split by bytes.Fields itself, which knows
// Unicode's spaces.
func fields(text []byte, n int) ([]byte, bool) {
	for _, c := range text {
		if c >= utf8.RuneSelf {
			all := bytes.Fields(text)
			if n < len(all) {
				return all[n], true
			}
			return nil, true
		}
	}
	for i := 0; ; i++ {
		for len(text) > 0 && asciiSpace(text[0]) {
			text = text[1:]
		}
		if len(text) == 0 {
			return nil, true
		}
		end := 0
		for end < len(text) && !asciiSpace(text[end]) {
			end++
		}
		if i == n {
			return text[:end], true
		}
		text = text[end:]
	}
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// uintBytes is Uint over b: up to 19 decimal digits (which cannot overflow) without allocating, anything
// else through strconv for its value or its exact error.
func uintBytes(b []byte) (uint64, error) {
	if len(b) == 0 || len(b) > 19 {
		return Uint(string(b))
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return Uint(string(b))
		}
		n = n*10 + uint64(c-'0')
	}
	return n, nil
}
