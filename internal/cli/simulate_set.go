package cli

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/scenario"
	"github.com/kube-pressure/pressure/internal/signal"
)

// assignment is one --set KEY=VALUE.
type assignment struct {
	raw, key, value string
}

// parseAssignments splits the --set flags; a flag without "=" is an error naming it.
func parseAssignments(sets []string) ([]assignment, error) {
	var out []assignment
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--set %q: want KEY=VALUE, e.g. evictionHard.memory.available=500Mi", s)
		}
		out = append(out, assignment{raw: s, key: k, value: v})
	}
	return out, nil
}

// evictionMaps are the kubelet settings keyed by eviction signal.
var evictionMaps = map[string]bool{"evictionHard": true, "evictionSoft": true, "evictionSoftGracePeriod": true,
	"evictionMinimumReclaim": true}

// setField sets the field named by the dotted key in the struct that target points to: a struct field
// by its JSON name, then, for a map field, the rest of the key as the map key (an empty value deletes
// it). what names the configuration in errors.
func setField(target any, a assignment, key, what string) error {
	v := reflect.ValueOf(target).Elem()
	for {
		name, rest, _ := strings.Cut(key, ".")
		f, ok := fieldByJSON(v, name)
		if !ok {
			return fmt.Errorf("--set %s: unknown %s field %q%s", a.raw, what, name, scenario.Suggest(name, scenario.JSONFields(v.Interface())))
		}
		if f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct && !isScalarStruct(f.Type().Elem()) {
			if f.IsNil() {
				f.Set(reflect.New(f.Type().Elem()))
			}
			f = f.Elem()
		}
		switch {
		case f.Kind() == reflect.Map:
			return setMapEntry(f, a, name, rest)
		case f.Kind() == reflect.Struct && !isScalarStruct(f.Type()):
			if rest == "" {
				return fmt.Errorf("--set %s: %q is a group of fields: name one, e.g. %s.%s", a.raw, name, name,
					scenario.JSONFields(f.Interface())[0])
			}
			v, key = f, rest
			continue
		case rest != "":
			return fmt.Errorf("--set %s: %q is a single value, not a group: drop %q", a.raw, name, "."+rest)
		}
		if err := setScalar(f, a.value); err != nil {
			return fmt.Errorf("--set %s: %w", a.raw, err)
		}
		return nil
	}
}

func setMapEntry(f reflect.Value, a assignment, name, key string) error {
	if key == "" {
		return fmt.Errorf("--set %s: %q is a map: name its key, e.g. %s.memory.available=500Mi", a.raw, name, name)
	}
	if f.Type().Key().Kind() != reflect.String || f.Type().Elem().Kind() != reflect.String {
		return fmt.Errorf("--set %s: %q cannot be set with --set; use a configuration file", a.raw, name)
	}
	if evictionMaps[name] && !signal.Signal(key).Valid() {
		var known []string
		for _, s := range signal.All() {
			known = append(known, string(s))
		}
		return fmt.Errorf("--set %s: unknown eviction signal %q in %s (known: %s)", a.raw, key, name, strings.Join(known, ", "))
	}
	if f.IsNil() {
		f.Set(reflect.MakeMap(f.Type()))
	}
	if a.value == "" {
		f.SetMapIndex(reflect.ValueOf(key), reflect.Value{})
		return nil
	}
	f.SetMapIndex(reflect.ValueOf(key), reflect.ValueOf(a.value))
	return nil
}

var durationType = reflect.TypeOf(metav1.Duration{})

// isScalarStruct reports whether a struct type is set from one value (metav1.Duration).
func isScalarStruct(t reflect.Type) bool { return t == durationType }

// setScalar parses value into f: strings, booleans, integers, durations, lists (comma-separated).
func setScalar(f reflect.Value, value string) error {
	if f.Kind() == reflect.Pointer {
		p := reflect.New(f.Type().Elem())
		if err := setScalar(p.Elem(), value); err != nil {
			return err
		}
		f.Set(p)
		return nil
	}
	switch {
	case f.Type() == durationType || f.Type() == reflect.TypeOf(time.Duration(0)):
		d, err := time.ParseDuration(value)
		if err != nil {
			return fmt.Errorf("want a duration like 10s: %w", err)
		}
		if f.Type() == durationType {
			f.Set(reflect.ValueOf(metav1.Duration{Duration: d}))
		} else {
			f.SetInt(int64(d))
		}
	case f.Kind() == reflect.String:
		f.SetString(value)
	case f.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("want true or false")
		}
		f.SetBool(b)
	case f.CanInt():
		n, err := strconv.ParseInt(value, 10, f.Type().Bits())
		if err != nil {
			return fmt.Errorf("want an integer of %d bits", f.Type().Bits())
		}
		f.SetInt(n)
	case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
		var list []string
		if value != "" {
			list = strings.Split(value, ",")
		}
		f.Set(reflect.ValueOf(list))
	default:
		return fmt.Errorf("a field of type %s cannot be set with --set; use a configuration file", f.Type())
	}
	return nil
}

// fieldByJSON finds the field with the JSON name, looking into embedded structs.
func fieldByJSON(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if strings.Contains(opts, "inline") || sf.Anonymous && tag == "" {
			if f, ok := fieldByJSON(v.Field(i), name); ok {
				return f, true
			}
			continue
		}
		if tag == name && sf.IsExported() {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}
