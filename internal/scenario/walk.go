package scenario

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// doc walks a parsed scenario file, collecting errors with their positions.
type doc struct {
	file string
	errs []error
}

func (d *doc) fail(field string, n *yaml.Node, format string, args ...any) {
	d.errs = append(d.errs, at(d.file, field, n, fmt.Errorf(format, args...)))
}

// resolve follows an alias.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// mapping returns the fields of a mapping node by key, reporting a node that is not a mapping,
// duplicate keys and keys not in known. A nil or null node is an empty mapping.
func (d *doc) mapping(path string, n *yaml.Node, known ...string) map[string]*yaml.Node {
	n = resolve(n)
	out := map[string]*yaml.Node{}
	if n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return out
	}
	if n.Kind != yaml.MappingNode {
		d.fail(path, n, "want a mapping of %s", strings.Join(known, ", "))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		field := join(path, k.Value)
		switch {
		case k.Kind != yaml.ScalarNode:
			d.fail(path, k, "keys must be strings")
		case len(known) > 0 && !contains(known, k.Value):
			d.errs = append(d.errs, &Error{File: d.file, Line: k.Line, Column: k.Column, Field: field,
				Err: errors.New("unknown field" + Suggest(k.Value, known))})
		case out[k.Value] != nil:
			d.fail(field, k, "given twice")
		default:
			out[k.Value] = v
		}
	}
	return out
}

// sequence returns the items of a sequence node (nil or null: none).
func (d *doc) sequence(path string, n *yaml.Node) []*yaml.Node {
	n = resolve(n)
	if n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(path, n, "want a list")
		return nil
	}
	return n.Content
}

// scalar returns the node's value, reporting a node that is not a scalar. ok is false when absent.
func (d *doc) scalar(path string, n *yaml.Node) (string, bool) {
	n = resolve(n)
	if n == nil {
		return "", false
	}
	if n.Kind != yaml.ScalarNode {
		d.fail(path, n, "want a single value")
		return "", false
	}
	return n.Value, true
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

// errNegative and friends are the reasons of value errors.
var (
	errNegative = errors.New("must not be negative")
	errRequired = errors.New("required")
)

// Suggest returns " (did you mean \"x\"?)" for the known name closest to name when it is close,
// else the list of known names when it is short, else "".
func Suggest(name string, known []string) string {
	best, dist := "", 1<<30
	for _, k := range known {
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < dist || d == dist && k < best {
			best, dist = k, d
		}
	}
	if best != "" && dist <= max(2, len(name)/3) {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	if len(known) > 12 {
		return ""
	}
	return " (known: " + strings.Join(sorted(known), ", ") + ")"
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
