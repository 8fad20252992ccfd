package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/fileerr"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// FileError is a problem with one file of a snapshot (or one live endpoint): the file, the JSON
// field and the line when known.
type FileError = fileerr.Error

// decodeJSON decodes data into v and, on error, names the file, the line and the field.
func decodeJSON(file string, data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &FileError{File: file, Err: errors.New("empty file, want a JSON object")}
	}
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	fe := &FileError{File: file, Err: err}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		fe.Line, fe.Column = lineCol(data, syn.Offset)
	case errors.As(err, &typ):
		fe.Line, fe.Column = lineCol(data, typ.Offset)
		fe.Field = typ.Field
	default:
		// Errors of UnmarshalJSON methods (quantities, times) carry no position: find the value.
		fe.Field = locateBadValue(data)
	}
	return fe
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(data []byte, offset int64) (int, int) {
	if offset < 0 {
		offset = 0
	}
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// quantityParents are the keys whose string members (or the key itself) are resource quantities.
var quantityParents = map[string]bool{"capacity": true, "allocatable": true, "requests": true, "limits": true,
	"overhead": true, "sizeLimit": true}

// locateBadValue walks data and returns the path of the first string (keys sorted) that is
// neither a valid quantity where a quantity is expected nor a valid RFC 3339 time where a time is
// expected; "" when nothing is found.
func locateBadValue(data []byte) string {
	var root any
	if err := json.Unmarshal(data, &root); err != nil {
		return ""
	}
	return walkBad(root, "", "")
}

func walkBad(v any, path, key string) string {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			child := k
			if quantityParents[key] {
				child = key // members of a resource list are quantities
			}
			if p := walkBad(t[k], join(path, k), child); p != "" {
				return p
			}
		}
	case []any:
		for i, e := range t {
			if p := walkBad(e, fmt.Sprintf("%s[%d]", path, i), key); p != "" {
				return p
			}
		}
	case string:
		if badString(key, t) {
			return path
		}
	}
	return ""
}

func badString(key, s string) bool {
	if quantityParents[key] {
		_, err := threshold.ParseQuantity(s)
		return err != nil
	}
	if strings.HasSuffix(key, "Time") || strings.HasSuffix(key, "Timestamp") || key == "time" {
		_, err := time.Parse(time.RFC3339, s)
		return err != nil
	}
	return false
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// sortedKeys returns the keys of m in order: map order never reaches output.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
