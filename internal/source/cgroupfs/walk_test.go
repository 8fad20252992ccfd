package cgroupfs

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestWalkCgroupsVisitsEveryDirectoryParentsFirstInNameOrder(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"b/y", "a/z", "a/x", "c"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"cgroup.procs", "a/tasks", "a/x/cgroup.procs"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err := walkCgroups(root, func(d string) error {
		rel, _ := filepath.Rel(root, d)
		got = append(got, rel)
		return nil
	})
	want := []string{".", "a", "a/x", "a/z", "b", "b/y", "c"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("walkCgroups = %v, %v; want %v", got, err, want)
	}
	if err := walkCgroups(filepath.Join(root, "gone"), func(string) error { return nil }); !os.IsNotExist(err) ||
		!strings.Contains(err.Error(), "gone") {
		t.Errorf("walkCgroups of a missing directory = %v, want a not-exist error naming it", err)
	}
}

// dirent encodes one linux_dirent64 record, padded to 8 bytes as the kernel does.
func dirent(name string, typ byte) []byte {
	n := 19 + len(name) + 1
	n = (n + 7) &^ 7
	b := make([]byte, n)
	binary.NativeEndian.PutUint64(b[0:], 1)
	binary.NativeEndian.PutUint16(b[16:], uint16(n))
	b[18] = typ
	copy(b[19:], name)
	return b
}

func TestAppendDirsKeepsDirectoriesOnly(t *testing.T) {
	var b []byte
	for _, e := range []struct {
		name string
		typ  byte
	}{{".", unix.DT_DIR}, {"..", unix.DT_DIR}, {"memory.stat", unix.DT_REG}, {"ctr2", unix.DT_DIR}, {"ctr1", unix.DT_DIR}, {"l", unix.DT_LNK}} {
		b = append(b, dirent(e.name, e.typ)...)
	}
	got, err := appendDirs(nil, "/x", b)
	if err != nil || !slices.Equal(got, []string{"ctr2", "ctr1"}) {
		t.Errorf("appendDirs = %v, %v; want [ctr2 ctr1] (unsorted: subdirs sorts)", got, err)
	}
	if _, err := appendDirs(nil, "/x", dirent("a", unix.DT_DIR)[:18]); err != nil {
		t.Errorf("a trailing fragment shorter than a record header: %v, want it ignored", err)
	}
	bad := dirent("a", unix.DT_DIR)
	binary.NativeEndian.PutUint16(bad[16:], 200)
	if _, err := appendDirs(nil, "/x", bad); err == nil || !strings.Contains(err.Error(), "/x") {
		t.Errorf("a record longer than the buffer: %v, want an error naming the directory", err)
	}
}

// FuzzAppendDirs: any bytes either fail with an error or give names that are neither empty, "." nor
// "..", and well-formed records of random names give back exactly their directories.
func FuzzAppendDirs(f *testing.F) {
	f.Add([]byte{}, "ctr1", "memory.stat")
	f.Add(dirent("a", unix.DT_DIR), "..", "x\x00y")
	f.Fuzz(func(t *testing.T, raw []byte, dir, file string) {
		if names, err := appendDirs(nil, "/d", raw); err == nil {
			for _, n := range names {
				if n == "." || n == ".." {
					t.Fatalf("appendDirs(%x) returned %q", raw, n)
				}
			}
		}
		if dir == "" || file == "" || strings.ContainsRune(dir, 0) || strings.ContainsRune(file, 0) || len(dir) > 255 || len(file) > 255 {
			return
		}
		b := append(append(dirent(file, unix.DT_REG), dirent(dir, unix.DT_DIR)...), dirent(".", unix.DT_DIR)...)
		got, err := appendDirs(nil, "/d", b)
		want := []string{dir}
		if dir == "." || dir == ".." {
			want = nil
		}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("appendDirs(file %q, dir %q) = %q, %v; want %q", file, dir, got, err, want)
		}
	})
}
