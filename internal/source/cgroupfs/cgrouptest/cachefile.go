package cgrouptest

import (
	"crypto/rand"
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kube-pressure/pressure/internal/testenv"
)

// CacheFile writes n random bytes to a file on the real disk under /var/tmp and drops it from the page
// cache, so that a process reading it fills reclaimable file pages (tmpfs pages are shmem, which no
// reclaim of file pages frees). The file is removed when the test ends.
func CacheFile(tb testing.TB, n int64) string {
	tb.Helper()
	f, err := os.CreateTemp("/var/tmp", "pressure-cache-*.dat")
	if err != nil {
		testenv.SkipOrFail(tb, "no real disk under /var/tmp: %v", err)
	}
	tb.Cleanup(func() { os.Remove(f.Name()) })
	defer f.Close()
	if _, err := io.CopyN(f, rand.Reader, n); err != nil {
		tb.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		tb.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		tb.Fatalf("drop %s from the page cache: %v", f.Name(), err)
	}
	return f.Name()
}
