package parse_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/internal/source/parse"
)

// pickKeys are the memory.stat keys the agent's poll picks.
var pickKeys = []string{"total_inactive_file", "anon", "file", "inactive_file"}

func TestPickKeyValuesGivesKeyValuesValuesForItsKeys(t *testing.T) {
	for _, tc := range []struct {
		name, in  string
		want      []uint64
		wantFound uint64
		wantErr   error
	}{
		{"the picked keys of a v2 root memory.stat", "anon 10\nfile 20\nkernel 5\ninactive_file 7\n", []uint64{0, 10, 20, 7}, 0b1110, nil},
		{"a v1 memory.stat's total_ counter, not the cgroup's own", "inactive_file 3\ntotal_inactive_file 9\n", []uint64{9, 0, 0, 3}, 0b1001, nil},
		{"a key the file lacks is not found, not 0", "anon 1\n", []uint64{0, 1, 0, 0}, 0b0010, nil},
		{"CRLF lines and blank lines are read as KeyValues reads them", "anon 1\r\n\n  \nfile\t2\r\n", []uint64{0, 1, 2, 0}, 0b0110, nil},
		{"a malformed line of another key is not parsed", "kernel x y\nanon 1\n", []uint64{0, 1, 0, 0}, 0b0010, nil},
		{"a picked key without a value is ErrSyntax", "anon\n", nil, 0, parse.ErrSyntax},
		{"a picked key with three fields is ErrSyntax", "anon 1 2\n", nil, 0, parse.ErrSyntax},
		{"a picked key twice is ErrSyntax", "anon 1\nanon 2\n", nil, 0, parse.ErrSyntax},
		{"a negative value of a picked key is an error", "file -1\n", nil, 0, errAny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := make([]uint64, len(pickKeys))
			found, err := parse.PickKeyValues([]byte(tc.in), "memory.stat", pickKeys, vals)
			if tc.wantErr != nil {
				if err == nil || (tc.wantErr != errAny && !errors.Is(err, tc.wantErr)) {
					t.Errorf("PickKeyValues(%q) error = %v, want %v", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil || found != tc.wantFound || fmt.Sprint(vals) != fmt.Sprint(tc.want) {
				t.Errorf("PickKeyValues(%q) = %v, %b, %v; want %v, %b", tc.in, vals, found, err, tc.want, tc.wantFound)
			}
		})
	}
}

var errAny = errors.New("any error")

func TestPickKeyValuesAndSingleUintBytesDoNotAllocate(t *testing.T) {
	stat := []byte(strings.Repeat("total_pgfault 123456789\n", 30) + "total_inactive_file 1613541376\n")
	vals := make([]uint64, len(pickKeys))
	if n := testing.AllocsPerRun(100, func() { _, _ = parse.PickKeyValues(stat, "memory.stat", pickKeys, vals) }); n != 0 {
		t.Errorf("PickKeyValues allocates %.0f times per call, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = parse.SingleUintOrMaxBytes([]byte("8589934592\n"), "memory.max") }); n != 0 {
		t.Errorf("SingleUintOrMaxBytes allocates %.0f times per call, want 0", n)
	}
}

// FuzzPickKeyValues checks PickKeyValues against KeyValues: where KeyValues parses the file, PickKeyValues
// gives the same value for each picked key and finds exactly the keys the map has; where PickKeyValues
// fails, KeyValues fails too.
func FuzzPickKeyValues(f *testing.F) {
	f.Add("anon 1\nfile 2\ninactive_file 3\n")
	f.Add("total_inactive_file 9\r\nanon\t4\n\n")
	f.Add("anon 1\nanon 2\n")
	f.Add("file 1 2\n")
	f.Add("anon\u00a05\n")
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) >= 64<<10 { // bufio.Scanner's line limit, which PickKeyValues does not have
			return
		}
		m, merr := parse.KeyValues(strings.NewReader(in), "memory.stat")
		vals := make([]uint64, len(pickKeys))
		found, perr := parse.PickKeyValues([]byte(in), "memory.stat", pickKeys, vals)
		if perr != nil {
			if merr == nil {
				t.Errorf("PickKeyValues(%q) error %v, KeyValues none", in, perr)
			}
			return
		}
		if merr != nil {
			return
		}
		for i, k := range pickKeys {
			v, ok := m[k]
			if ok != (found&(1<<i) != 0) || (ok && v != vals[i]) {
				t.Errorf("PickKeyValues(%q)[%s] = %d (found %t), KeyValues %d (found %t)", in, k, vals[i], found&(1<<i) != 0, v, ok)
			}
		}
	})
}

// FuzzSingleUintBytes checks SingleUintBytes and SingleUintOrMaxBytes against their io.Reader
// counterparts: the same value and the same error text.
func FuzzSingleUintBytes(f *testing.F) {
	for _, s := range []string{"8589934592\n", "max\n", "", "\n", " 12 \r\n", "18446744073709551616\n", "-1\n", "1\n2\n", "+5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) >= 64<<10 {
			return
		}
		for _, orMax := range []bool{false, true} {
			want, werr := parse.SingleUint(strings.NewReader(in), "memory.current")
			got, gerr := parse.SingleUintBytes([]byte(in), "memory.current")
			if orMax {
				want, werr = parse.SingleUintOrMax(strings.NewReader(in), "memory.max")
				got, gerr = parse.SingleUintOrMaxBytes([]byte(in), "memory.max")
			}
			if got != want || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Errorf("orMax=%t, %q: got %d, %v; want %d, %v", orMax, in, got, gerr, want, werr)
			}
		}
	})
}
