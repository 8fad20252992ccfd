package procfs_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/source/procfs"
)

func TestProcessStatAndMemoryOfThisTestProcess(t *testing.T) {
	r := procfs.NewReader("")
	s, err := r.ProcessStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix("procfs.test", s.Comm) {
		t.Errorf("comm %q, want this test binary's name (at most 15 bytes of procfs.test)", s.Comm)
	}
	m, err := r.ProcessMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !m.Known || m.RSS <= 0 || m.HWM < m.RSS {
		t.Errorf("memory %+v, want a known RSS above 0 and a peak at least the RSS", m)
	}
}

func TestProcessStatParsesTheTimesAfterTheLastParenthesis(t *testing.T) {
	in := "1234 (a (b) c) S 1 1234 1234 0 -1 4194560 2466 0 0 0 57 12 0 0 20 0 9 0 1726 0 0\n"
	s, err := procfs.ParseProcessStat(strings.NewReader(in), "/proc/1234/stat")
	if err != nil {
		t.Fatal(err)
	}
	if want := (procfs.ProcessStat{Comm: "a (b) c", State: "S", UTime: 57, STime: 12, StartTime: 1726}); s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	if got, want := s.CPU(), 690*time.Millisecond; got != want {
		t.Errorf("CPU %s, want %s", got, want)
	}
}

func TestProcessStatGivesTheStateAndStartOfANamedOrZombieProcess(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       procfs.ProcessStat
	}{
		{"command with spaces and parens", "42 (a b) c)) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 10",
			procfs.ProcessStat{Comm: "a b) c)", State: "S", UTime: 1, STime: 2, StartTime: 98765}},
		{"zombie", "7 (x) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0", procfs.ProcessStat{Comm: "x", State: "Z", StartTime: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := procfs.ParseProcessStat(strings.NewReader(tc.stat), "stat")
			if err != nil || s != tc.want {
				t.Errorf("got %+v, %v; want %+v", s, err, tc.want)
			}
		})
	}
}

func TestBadProcessFilesNameTheFileLineAndValue(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		status         bool
	}{
		{"stat without a command name", "1234 S 1 2 3", `/proc/1/stat line 1 value "1234 S 1 2 3": no (command name)`, false},
		{"stat cut short", "1 (x) S 1 2 3", "4 fields after the command name, want at least 20", false},
		{"stat with a negative utime", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 -5 12 0 0 20 0 1 0 5", `field 14 "-5"`, false},
		{"stat with a start time that is no number", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 5 12 0 0 20 0 1 0 x", `field 22 "x"`, false},
		{"status RSS without kB", "Name:\tx\nVmRSS:\t 12\n", `/proc/1/status line 2 value "VmRSS:\t 12": want "VmRSS: N kB"`, true},
		{"status RSS twice", "VmRSS: 1 kB\nVmRSS: 2 kB\n", "VmRSS repeated", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.status {
				_, err = procfs.ParseProcessStatus(strings.NewReader(tc.in), "/proc/1/status")
			} else {
				_, err = procfs.ParseProcessStat(strings.NewReader(tc.in), "/proc/1/stat")
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestAKernelThreadsStatusHasNoKnownMemory(t *testing.T) {
	m, err := procfs.ParseProcessStatus(strings.NewReader("Name:\tkthreadd\nState:\tS (sleeping)\n"), "/proc/2/status")
	if err != nil || m.Known {
		t.Errorf("got %+v, %v; want unknown memory and no error", m, err)
	}
}

func FuzzParseProcessStat(f *testing.F) {
	f.Add("pressure-agent", uint64(57), uint64(12), uint64(1726), "S 1 1234 1234 0 -1 4194560 2466 0 0 0")
	f.Add("a) (b", uint64(0), uint64(1<<63), uint64(0), "R 0 0 0 0 0 0 0 0 0 0")
	f.Fuzz(func(t *testing.T, comm string, utime, stime, start uint64, before string) {
		// Round trip: any command name the kernel could print (no newline), state and times come back.
		if strings.ContainsAny(comm, "\n") || len(strings.Fields(before)) != 11 || strings.ContainsAny(before, "()\n") {
			return
		}
		line := fmt.Sprintf("42 (%s) %s %d %d 0 0 20 0 1 0 %d 0 0\n", comm, before, utime, stime, start)
		s, err := procfs.ParseProcessStat(strings.NewReader(line), "stat")
		if utime+stime < utime {
			if err == nil {
				t.Errorf("%q: overflowing times accepted: %+v", line, s)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		want := procfs.ProcessStat{Comm: comm, State: strings.Fields(before)[0], UTime: utime, STime: stime, StartTime: start}
		if s != want {
			t.Errorf("%q: got %+v, want %+v", line, s, want)
		}
	})
}

func FuzzParseProcessStatus(f *testing.F) {
	f.Add("Name:\tx\nVmHWM:\t   38412 kB\nVmRSS:\t   36920 kB\n")
	f.Add("VmRSS: 9007199254740993 kB\n")
	f.Fuzz(func(t *testing.T, in string) {
		m, err := procfs.ParseProcessStatus(strings.NewReader(in), "status")
		if err != nil {
			if m != (procfs.ProcessMemory{}) {
				t.Errorf("error %v with a non-zero value %+v", err, m)
			}
			return
		}
		if m.RSS < 0 || m.HWM < 0 || (!m.Known && (m.RSS != 0 || m.HWM != 0)) {
			t.Errorf("%q: got %+v", in, m)
		}
		// The values come back when printed again.
		if m.Known {
			again := fmt.Sprintf("VmHWM:\t%d kB\nVmRSS:\t%d kB\n", m.HWM>>10, m.RSS>>10)
			n, err := procfs.ParseProcessStatus(strings.NewReader(again), "status")
			if err != nil || n.RSS != m.RSS || n.HWM != m.HWM {
				t.Errorf("%q printed as %q parsed to %+v, %v", in, again, n, err)
			}
		}
	})
}
