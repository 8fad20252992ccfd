package parse

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

func TestCountLinesCountsLinesWithMoreThanWhiteSpace(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     uint64
	}{
		{"an empty cgroup.procs has no process", "", 0},
		{"one pid with its newline", "42\n", 1},
		{"the last line without a newline counts", "1\n2", 2},
		{"blank and white-space lines do not count", "1\n\n \t\n2\n\n", 2},
		{"CRLF line ends count once", "1\r\n2\r\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CountLines([]byte(tc.in)); got != tc.want {
				t.Errorf("CountLines(%q) = %d, want %d", tc.in, got, tc.want)
			}
			if got, err := Lines(strings.NewReader(tc.in), "f"); err != nil || got != tc.want {
				t.Errorf("Lines(%q) = %d, %v, want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

// scannerLines is the reference: bufio.Scanner's lines, counted when not blank after TrimSpace.
func scannerLines(b []byte) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	var n uint64
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			n++
		}
	}
	return n, sc.Err() == nil
}

// FuzzCountLines: CountLines agrees with the bufio.Scanner reference on every input the scanner
// accepts (lines under its 64 KiB limit), on ASCII white space.
func FuzzCountLines(f *testing.F) {
	for _, s := range []string{"", "1\n", "1\n\n2", " \t\r\n", "12\r\n34"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if bytes.ContainsFunc(b, func(r rune) bool { return r > 0x7f || r == 0x85 }) {
			return // Unicode white space: TrimSpace of a string and of bytes agree, the split may not
		}
		want, ok := scannerLines(b)
		if !ok {
			return
		}
		if got := CountLines(b); got != want {
			t.Fatalf("CountLines(%q) = %d, the scanner counts %d", b, got, want)
		}
	})
}
