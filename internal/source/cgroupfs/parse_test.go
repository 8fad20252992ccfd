package cgroupfs_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/parse"
)

var strconvErr = strconv.ErrSyntax

func u(v uint64) *uint64 { return &v }

func TestParseMemoryStat(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]uint64
		wantErr  error
		wantLine int
	}{
		{name: "v1 keys parse", in: "cache 15724544\ntotal_inactive_file 1613541376\n",
			want: map[string]uint64{"cache": 15724544, "total_inactive_file": 1613541376}},
		{name: "blank lines are skipped", in: "anon 1\n\nfile 2\n", want: map[string]uint64{"anon": 1, "file": 2}},
		{name: "a line with three fields names line 2", in: "anon 1\nfile 2 3\n", wantErr: parse.ErrSyntax, wantLine: 2},
		{name: "a negative value is an error", in: "anon -1\n", wantErr: strconv.ErrSyntax, wantLine: 1},
		{name: "a repeated key is an error", in: "anon 1\nanon 2\n", wantErr: parse.ErrSyntax, wantLine: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cgroupfs.ParseMemoryStat(strings.NewReader(tc.in), "memory.stat")
			if tc.wantErr != nil {
				var pe *parse.Error
				if !errors.Is(err, tc.wantErr) || !errors.As(err, &pe) || pe.Line != tc.wantLine || pe.Path != "memory.stat" {
					t.Errorf("ParseMemoryStat() error = %v, want %v at memory.stat line %d", err, tc.wantErr, tc.wantLine)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseMemoryStat(): %v", err)
			}
			if d := cmp.Diff(got, tc.want); d != "" {
				t.Errorf("ParseMemoryStat() (-got +want):\n%s", d)
			}
		})
	}
}

func TestParseMemoryEvents(t *testing.T) {
	got, err := cgroupfs.ParseMemoryEvents(strings.NewReader("low 0\nhigh 12\nmax 3\noom 1\noom_kill 1\nsock_throttled 0\n"), "memory.events")
	if err != nil {
		t.Fatal(err)
	}
	want := cgroupfs.MemoryEvents{Low: u(0), High: u(12), Max: u(3), OOM: u(1), OOMKill: u(1)}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("ParseMemoryEvents() (-got +want), oom_group_kill absent must stay nil:\n%s", d)
	}
}

func TestParseErrorNamesFileLineAndValue(t *testing.T) {
	_, err := cgroupfs.ParseMemoryStat(strings.NewReader("anon 1\nfile x\n"), "/sys/fs/cgroup/memory.stat")
	want := `parse /sys/fs/cgroup/memory.stat line 2 value "file x": strconv.ParseUint: parsing "x": invalid syntax`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func FuzzParseMemoryStat(f *testing.F) {
	f.Add("anon 1\nfile 2\ninactive_file 3\n")
	f.Add("total_inactive_file 1613541376\n")
	f.Add("anon 18446744073709551615\n")
	f.Add("a b c\n")
	f.Fuzz(func(t *testing.T, in string) {
		m, err := cgroupfs.ParseMemoryStat(strings.NewReader(in), "memory.stat")
		if err != nil && m != nil {
			t.Errorf("error %v with a non-nil map", err)
		}
		if err != nil {
			var pe *parse.Error
			if !errors.As(err, &pe) && !strings.Contains(err.Error(), "read memory.stat") {
				t.Errorf("error %v is not a parse.Error", err)
			}
		}
	})
}

func FuzzParseMemoryEvents(f *testing.F) {
	f.Add("low 0\nhigh 12\nmax 3\noom 1\noom_kill 1\n")
	f.Add("oom_group_kill x\n")
	f.Fuzz(func(t *testing.T, in string) {
		ev, err := cgroupfs.ParseMemoryEvents(strings.NewReader(in), "memory.events")
		if err != nil && ev != (cgroupfs.MemoryEvents{}) {
			t.Errorf("error %v with a non-zero value %+v", err, ev)
		}
	})
}
