package procfs_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/internal/source/procfs"
)

func FuzzParseMeminfo(f *testing.F) {
	f.Add("MemTotal:       24684092 kB\nHugePages_Total:       0\n")
	f.Add("Active(file):  1 kB\n")
	f.Add("MemTotal: 18014398509481983 kB\n")
	f.Fuzz(func(t *testing.T, in string) {
		m, err := procfs.ParseMeminfo(strings.NewReader(in), "meminfo")
		if err != nil && m != (procfs.Meminfo{}) {
			t.Errorf("error %v with a non-zero value", err)
		}
	})
}

func FuzzParsePSI(f *testing.F) {
	f.Add("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
	f.Add("some avg10=100.00 avg60=1e2 avg300=0x1p-2 total=18446744073709551615\n")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := procfs.ParsePSI(strings.NewReader(in), "memory")
		if err != nil {
			return
		}
		for _, v := range []float64{p.Some.Avg10, p.Some.Avg60, p.Some.Avg300} {
			if v < 0 || v > 100 || v != v {
				t.Errorf("percentage %v out of range from %q", v, in)
			}
		}
	})
}

func FuzzParseLoadavg(f *testing.F) {
	f.Add("4.39 2.30 0.93 8/140 11379\n")
	f.Add("0 0 0 0/0 0")
	f.Fuzz(func(t *testing.T, in string) {
		l, err := procfs.ParseLoadavg(strings.NewReader(in), "loadavg")
		if err != nil && l != (procfs.Loadavg{}) {
			t.Errorf("error %v with a non-zero value", err)
		}
		if err == nil && (l.Load1 < 0 || l.Load5 < 0 || l.Load15 < 0) {
			t.Errorf("negative load from %q: %+v", in, l)
		}
	})
}

func FuzzParseSysctlUint(f *testing.F) {
	f.Add("32768\n")
	f.Add("")
	f.Add(" 4194304 \r\nextra")
	f.Add("-1\n")
	f.Add("18446744073709551616")
	f.Fuzz(func(t *testing.T, in string) {
		v, err := procfs.ParseSysctlUint(strings.NewReader(in), "pid_max")
		// The reference: the first line, trimmed, is one decimal uint64.
		first, _, _ := strings.Cut(in, "\n")
		if len(first) >= bufio.MaxScanTokenSize-1 {
			return // longer than a line the scanner reads; an error either way
		}
		want, werr := strconv.ParseUint(strings.TrimSpace(first), 10, 64)
		if (err == nil) != (werr == nil) || v != want && err == nil {
			t.Fatalf("ParseSysctlUint(%q) = %d, %v; the first line trimmed parses as %d, %v", in, v, err, want, werr)
		}
		if err != nil && (v != 0 || !strings.Contains(err.Error(), "pid_max")) {
			t.Errorf("ParseSysctlUint(%q) = %d, %v: an error returns 0 and names the file", in, v, err)
		}
	})
}

func FuzzParseOOMScoreAdj(f *testing.F) {
	f.Add("-997\n")
	f.Add("1000")
	f.Add("-1001\n")
	f.Fuzz(func(t *testing.T, in string) {
		v, err := procfs.ParseOOMScoreAdj(strings.NewReader(in), "oom_score_adj")
		if err == nil && (v < -1000 || v > 1000) {
			t.Errorf("oom_score_adj %d out of range from %q", v, in)
		}
		if err != nil && (v != 0 || !strings.Contains(err.Error(), "oom_score_adj")) {
			t.Errorf("error %v (value %d) does not name the file or returns a value", err, v)
		}
	})
}

func TestOOMScoreAdj(t *testing.T) {
	root := t.TempDir()
	for pid, v := range map[string]string{"10": "-997\n", "11": "abc\n", "12": "1001\n"} {
		if err := os.MkdirAll(filepath.Join(root, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, pid, "oom_score_adj"), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := procfs.NewReader(root)
	if v, err := r.OOMScoreAdj(10); err != nil || v != -997 {
		t.Errorf("pid 10: %d, %v; want -997", v, err)
	}
	for _, pid := range []int{11, 12, 13} {
		if _, err := r.OOMScoreAdj(pid); err == nil || !strings.Contains(err.Error(), filepath.Join(root, fmt.Sprint(pid), "oom_score_adj")) {
			t.Errorf("pid %d: error %v, want one naming the file", pid, err)
		}
	}
	if v, err := procfs.NewReader("/proc").OOMScoreAdj(os.Getpid()); err != nil || v < -1000 || v > 1000 {
		t.Errorf("this process's oom_score_adj on the real /proc: %d, %v", v, err)
	}
}

func FuzzParseVmstat(f *testing.F) {
	f.Add("nr_active_file 234164\nworkingset_refault_file 284855\nworkingset_activate_file 184921\n")
	f.Add("workingset_activate -1\n")
	f.Add("a b c\n")
	f.Fuzz(func(t *testing.T, in string) {
		m, err := procfs.ParseVmstat(strings.NewReader(in), "vmstat")
		if err != nil && m != nil {
			t.Errorf("error %v with a non-nil map", err)
		}
		for k := range m {
			if !strings.Contains(in, k) {
				t.Errorf("counter %q is not in the input %q", k, in)
			}
		}
	})
}
