package cgroupfs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// direntBufSize is the getdents buffer of one walk: a v1 memory cgroup directory has about 30 files
// (about 1.5 KiB of records), so one call lists a directory.
const direntBufSize = 8 << 10

// walkCgroups calls fn with dir and then every directory below it, depth first, parents before their
// children and siblings in name order. It lists directories only: a cgroup's files are read by fn by
// name, so the walk does not visit (or allocate for) the thirty control files of every cgroup as
// filepath.WalkDir does. Errors are *os.PathError (a directory removed during the walk fails it, as
// with WalkDir) or fn's.
func walkCgroups(dir string, fn func(dir string) error) error {
	buf := make([]byte, direntBufSize)
	var walk func(string) error
	walk = func(d string) error {
		subs, err := subdirs(d, buf)
		if err != nil {
			return err
		}
		if err := fn(d); err != nil {
			return err
		}
		for _, s := range subs {
			if err := walk(filepath.Join(d, s)); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(dir)
}

// subdirs returns the names of the directories in dir, sorted, from getdents64 records read into buf.
// An entry of unknown type (a file system without d_type; cgroupfs and the fixtures' file systems have
// it) is looked up with lstat.
func subdirs(dir string, buf []byte) ([]string, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	for err == unix.EINTR {
		fd, err = unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	var out []string
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "getdents", Path: dir, Err: err}
		}
		if n <= 0 {
			break
		}
		if out, err = appendDirs(out, dir, buf[:n]); err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return out, nil
}

// appendDirs appends the directory names of the linux_dirent64 records in b (d_ino u64, d_off s64,
// d_reclen u16, d_type u8, d_name NUL-terminated) to out, without "." and "..".
func appendDirs(out []string, dir string, b []byte) ([]string, error) {
	const nameOff = 19
	for len(b) >= nameOff {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < nameOff || reclen > len(b) {
			return out, &os.PathError{Op: "getdents", Path: dir, Err: errors.New("malformed directory record")}
		}
		typ, name := b[18], b[nameOff:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		b = b[reclen:]
		if string(name) == "." || string(name) == ".." {
			continue
		}
		if typ == unix.DT_UNKNOWN {
			fi, err := os.Lstat(filepath.Join(dir, string(name)))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return out, err
			}
			if fi.IsDir() {
				out = append(out, string(name))
			}
			continue
		}
		if typ == unix.DT_DIR {
			out = append(out, string(name))
		}
	}
	return out, nil
}
