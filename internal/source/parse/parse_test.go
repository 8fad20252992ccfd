package parse_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/internal/source/parse"
)

func TestSingleUintOrMaxTreatsMaxAsUnlimited(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     uint64
		wantErr  error
	}{
		{"max is MaxUint64", "max\n", math.MaxUint64, nil},
		{"a number is itself", "8589934592\n", 8589934592, nil},
		{"an empty file is ErrEmpty, not 0", "", 0, parse.ErrEmpty},
		{"a blank line is ErrEmpty, not 0", "\n", 0, parse.ErrEmpty},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse.SingleUintOrMax(strings.NewReader(tc.in), "memory.max")
			if !errors.Is(err, tc.wantErr) || got != tc.want {
				t.Errorf("SingleUintOrMax(%q) = %d, %v; want %d, %v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestErrorWithoutLineOmitsIt(t *testing.T) {
	err := &parse.Error{Path: "/proc/meminfo", Value: "MemTotal", Err: parse.ErrMissing}
	if got, want := err.Error(), `parse /proc/meminfo value "MemTotal": missing`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, parse.ErrMissing) {
		t.Errorf("errors.Is(%v, ErrMissing) = false", err)
	}
}

func FuzzKeyValues(f *testing.F) {
	f.Add("anon 1\nfile 2\n")
	f.Add("a\tb\n")
	f.Fuzz(func(t *testing.T, in string) {
		m, err := parse.KeyValues(strings.NewReader(in), "memory.stat")
		if err == nil {
			for k := range m {
				if k == "" || strings.ContainsAny(k, " \t\n") {
					t.Errorf("key %q from %q", k, in)
				}
			}
		}
	})
}
