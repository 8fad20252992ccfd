package procfs_test

import (
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
	f.Fuzz(func(t *testing.T, in string) {
		_, _ = procfs.ParseSysctlUint(strings.NewReader(in), "pid_max")
	})
}
