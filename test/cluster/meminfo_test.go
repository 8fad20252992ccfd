package cluster

import (
	"strings"
	"testing"
)

func TestMemTotalReadsKibibytesAsBytes(t *testing.T) {
	got, err := MemTotal(strings.NewReader("MemTotal:       16384 kB\nMemFree: 1 kB\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(16384 << 10); got != want {
		t.Errorf("MemTotal = %d, want %d", got, want)
	}
	if _, err := MemTotal(strings.NewReader("MemFree: 1 kB\n")); err == nil {
		t.Error("no MemTotal line: no error")
	}
}

func FuzzMemTotal(f *testing.F) {
	f.Add("MemTotal: 16384 kB\n")
	f.Add("MemTotal: x kB\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := MemTotal(strings.NewReader(s))
		if err == nil && v%1024 != 0 {
			t.Errorf("MemTotal(%q) = %d, not a whole number of KiB", s, v)
		}
	})
}
