package cli

// A real terminal (a pseudo-terminal from /dev/ptmx): text output is coloured there, unless NO_COLOR
// is set, and wraps at the terminal's width when COLUMNS is unset.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// openPTY opens a pseudo-terminal of cols columns and returns its master and slave ends.
func openPTY(t *testing.T, cols uint16) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	t.Cleanup(func() { slave.Close() })
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 50, Col: cols}); err != nil {
		t.Fatalf("set pty size: %v", err)
	}
	return master, slave
}

// explainOnTerminal runs explain of the seed snapshot with stdout on a fresh terminal of cols
// columns and returns what the terminal received.
func explainOnTerminal(t *testing.T, cols uint16, args ...string) string {
	t.Helper()
	master, slave := openPTY(t, cols)
	got := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		_, _ = io.Copy(&b, master) // ends with EIO once the slave is closed
		got <- b.String()
	}()
	var errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: slave, ErrOut: &errOut}
	err := Run(t.Context(), streams, append([]string{"explain", "--snapshot", filepath.Join("testdata", "snapshots", "seed")}, args...))
	slave.Close()
	if err != nil {
		t.Fatalf("explain on a terminal: %v", err)
	}
	return strings.ReplaceAll(<-got, "\r\n", "\n")
}

func TestTextOnATerminalIsColouredAndWrapsAtItsWidth(t *testing.T) {
	t.Setenv("COLUMNS", "")
	out := explainOnTerminal(t, 90)
	if !strings.Contains(out, "\x1b[1m") {
		t.Errorf("no colour escapes on a terminal:\n%q", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "memory eviction starts") && len([]rune(stripANSI(l))) > 90 {
			t.Errorf("prose line of %d columns on a 90-column terminal: %q", len([]rune(stripANSI(l))), l)
		}
	}

	t.Setenv("NO_COLOR", "1")
	if out := explainOnTerminal(t, 90); strings.Contains(out, "\x1b[") {
		t.Errorf("colour escapes on a terminal with NO_COLOR set:\n%q", out)
	}
}

// stripANSI removes the escapes TextOptions.Color writes.
func stripANSI(s string) string {
	for _, e := range []string{"\x1b[1m", "\x1b[33m", "\x1b[31m", "\x1b[0m"} {
		s = strings.ReplaceAll(s, e, "")
	}
	return s
}
