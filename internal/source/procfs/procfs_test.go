package procfs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/parse"
	"github.com/kube-pressure/pressure/internal/source/procfs"
	"github.com/kube-pressure/pressure/internal/testenv"
)

// fixture is /proc captured on this host (kernel 6.18.44) by cgroupfs/testdata/capture-v1.sh.
const fixture = "testdata/proc-k6.18.44"

var now = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

func u(v uint64) *uint64 { return &v }

func TestParseMeminfo(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     procfs.Meminfo
		wantErr  error
	}{
		{name: "kB values become bytes and unknown keys are skipped",
			in:   "MemTotal:       24684092 kB\nMemFree: 1 kB\nZswap: 0 kB\n",
			want: procfs.Meminfo{MemTotal: u(24684092 * 1024), MemFree: u(1024)}},
		{name: "unitless HugePages counts stay counts",
			in:   "HugePages_Total:       3\nHugepagesize:       2048 kB\n",
			want: procfs.Meminfo{HugePagesTotal: u(3), Hugepagesize: u(2048 * 1024)}},
		{name: "a zero field is present, not absent", in: "SwapTotal: 0 kB\n", want: procfs.Meminfo{SwapTotal: u(0)}},
		{name: "Active(file) and Inactive(file) keep their parentheses", in: "Active(file): 2 kB\nInactive(file): 3 kB\n",
			want: procfs.Meminfo{ActiveFile: u(2048), InactiveFile: u(3072)}},
		{name: "an unknown unit is an error", in: "MemTotal: 1 MB\n", wantErr: parse.ErrSyntax},
		{name: "a line without a colon is an error", in: "MemTotal 1 kB\n", wantErr: parse.ErrSyntax},
		{name: "a repeated MemTotal is an error", in: "MemTotal: 1 kB\nMemTotal: 2 kB\n", wantErr: parse.ErrSyntax},
		{name: "a kB value that overflows bytes is an error", in: "MemTotal: 18446744073709551615 kB\n", wantErr: parse.ErrSyntax},
		{name: "a non-number is an error", in: "MemTotal: x kB\n", wantErr: strconv.ErrSyntax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := procfs.ParseMeminfo(strings.NewReader(tc.in), "meminfo")
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("ParseMeminfo() error = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(got, tc.want); d != "" {
				t.Errorf("ParseMeminfo() (-got +want):\n%s", d)
			}
		})
	}
}

func TestParseLoadavg(t *testing.T) {
	got, err := procfs.ParseLoadavg(strings.NewReader("4.39 2.30 0.93 8/140 11379\n"), "loadavg")
	if err != nil {
		t.Fatal(err)
	}
	want := procfs.Loadavg{Load1: 4.39, Load5: 2.30, Load15: 0.93, Runnable: 8, Tasks: 140, LastPID: 11379}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("ParseLoadavg() (-got +want):\n%s", d)
	}
	for _, bad := range []string{"", "1 2 3 4 5", "1 2 3 8-140 1", "1 2 3 8/140", "-1 2 3 8/140 1", "NaN 2 3 8/140 1"} {
		if _, err := procfs.ParseLoadavg(strings.NewReader(bad), "loadavg"); err == nil {
			t.Errorf("ParseLoadavg(%q) succeeded, want an error", bad)
		}
	}
}

func TestParsePSI(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     procfs.PSI
		wantErr  error
	}{
		{name: "some and full lines parse",
			in: "some avg10=1.50 avg60=0.80 avg300=0.20 total=123456\nfull avg10=0.50 avg60=0.10 avg300=0.00 total=45678\n",
			want: procfs.PSI{Some: signal.PressureLine{Avg10: 1.5, Avg60: 0.8, Avg300: 0.2, Total: 123456},
				Full: &signal.PressureLine{Avg10: 0.5, Avg60: 0.1, Total: 45678}}},
		{name: "cpu on old kernels has no full line and Full stays nil",
			in:   "some avg10=0.00 avg60=0.00 avg300=0.00 total=7\n",
			want: procfs.PSI{Some: signal.PressureLine{Total: 7}}},
		{name: "a file without a some line is missing some", in: "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", wantErr: parse.ErrMissing},
		{name: "fields out of order are an error", in: "some avg60=0.00 avg10=0.00 avg300=0.00 total=0\n", wantErr: parse.ErrSyntax},
		{name: "a percentage above 100 is an error", in: "some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n", wantErr: parse.ErrSyntax},
		{name: "two some lines are an error", in: "some avg10=0 avg60=0 avg300=0 total=0\nsome avg10=0 avg60=0 avg300=0 total=0\n", wantErr: parse.ErrSyntax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := procfs.ParsePSI(strings.NewReader(tc.in), "memory")
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("ParsePSI() error = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(got, tc.want); d != "" {
				t.Errorf("ParsePSI() (-got +want):\n%s", d)
			}
		})
	}
}

func TestReaderOnCapturedFixture(t *testing.T) {
	r := procfs.NewReader(fixture)
	total, err := r.MemTotal()
	if err != nil || total != 24684092*1024 {
		t.Errorf("MemTotal() = %d, %v; want %d", total, err, 24684092*1024)
	}
	o, err := r.ObservePIDs(now)
	if err != nil {
		t.Fatal(err)
	}
	// pid_max 32768 < threads-max 192730; loadavg "18.69 10.16 4.45 26/209 25313" has 209 tasks.
	want := signal.Observation{Available: 32768 - 209, Capacity: 32768, Time: now, Source: signal.SourceProcfs}
	if d := cmp.Diff(o, want); d != "" {
		t.Errorf("ObservePIDs() (-got +want):\n%s", d)
	}
	psi, err := r.Pressure(now)
	if err != nil {
		t.Fatal(err)
	}
	var res []string
	for _, p := range psi {
		res = append(res, p.Scope+"/"+p.Resource)
	}
	if d := cmp.Diff(res, []string{"node/cpu", "node/io", "node/memory"}); d != "" {
		t.Errorf("Pressure() resources (-got +want):\n%s", d)
	}
}

func TestVmstatOfCapturedFixture(t *testing.T) {
	vm, err := procfs.NewReader(fixture).Vmstat()
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]uint64{"workingset_refault_file": 620256, "workingset_activate_file": 272954} {
		if got, ok := vm[k]; !ok || got != want {
			t.Errorf("Vmstat()[%q] = %d, %t; want %d", k, got, ok, want)
		}
	}
	if _, err := procfs.NewReader(t.TempDir()).Vmstat(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Vmstat() of a tree without vmstat: error %v, want fs.ErrNotExist", err)
	}
}

func TestPIDsUseTheSmallerCeiling(t *testing.T) {
	p := procfs.PIDs{PIDMax: 4194304, ThreadsMax: 100000, Tasks: 500}
	if p.Max() != 100000 || p.Available() != 99500 {
		t.Errorf("PIDs%+v: Max()=%d Available()=%d, want 100000 and 99500", p, p.Max(), p.Available())
	}
}

func TestMissingFilesAreErrorsNotZeros(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "sys/kernel/threads-max")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "meminfo"), []byte("MemFree: 1 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := procfs.NewReader(dir)
	if o, err := r.ObservePIDs(now); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ObservePIDs() = %v, %v; want fs.ErrNotExist", o, err)
	}
	if v, err := r.MemTotal(); !errors.Is(err, parse.ErrMissing) {
		t.Errorf("MemTotal() = %d, %v; want parse.ErrMissing", v, err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "pressure")); err != nil {
		t.Fatal(err)
	}
	if psi, err := r.Pressure(now); err != nil || len(psi) != 0 {
		t.Errorf("Pressure() without /proc/pressure = %v, %v; want no records and no error (kernel without PSI)", psi, err)
	}
}

func TestRealProc(t *testing.T) {
	r := procfs.NewReader("")
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		testenv.SkipOrFail(t, "no /proc here: %v", err)
	}
	o, err := r.ObservePIDs(now)
	if err != nil {
		t.Fatal(err)
	}
	if o.Available <= 0 || o.Available >= o.Capacity {
		t.Errorf("pid.available on this host = %v, want 0 < available < capacity", o)
	}
	if _, err := r.MemTotal(); err != nil {
		t.Error(err)
	}
	if _, err := r.Pressure(now); err != nil {
		t.Error(err)
	}
}
