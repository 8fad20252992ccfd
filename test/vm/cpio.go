package vm

// The initramfs format is the "new ASCII" (newc) cpio format, documented in
// https://docs.kernel.org/driver-api/early-userspace/buffer-format.html: per entry a 110-byte header
// "070701" + 13 eight-digit hex fields (ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor,
// rdevmajor, rdevminor, namesize, check), the NUL-terminated name padded to 4 bytes, then the data
// padded to 4 bytes; the archive ends with an entry named "TRAILER!!!".

import (
	"fmt"
	"io"
	"path"
	"syscall"
)

// Cpio writes a newc cpio archive. Entries are written in the order they are added, so a directory
// must be added before what it holds. The first write error sticks and is returned by Close.
type Cpio struct {
	w   io.Writer
	ino int
	err error
}

// NewCpio starts an archive on w.
func NewCpio(w io.Writer) *Cpio { return &Cpio{w: w, ino: 1} }

// Dir adds a directory.
func (c *Cpio) Dir(name string, perm uint32) { c.entry(name, syscall.S_IFDIR|perm, 0, 0, nil) }

// File adds a regular file with its contents.
func (c *Cpio) File(name string, perm uint32, data []byte) {
	c.entry(name, syscall.S_IFREG|perm, 0, 0, data)
}

// Symlink adds a symbolic link name -> target.
func (c *Cpio) Symlink(name, target string) {
	c.entry(name, syscall.S_IFLNK|0o777, 0, 0, []byte(target))
}

// CharDev adds a character device node.
func (c *Cpio) CharDev(name string, perm uint32, major, minor int) {
	c.entry(name, syscall.S_IFCHR|perm, major, minor, nil)
}

// Close writes the trailer and returns the first error of the archive.
func (c *Cpio) Close() error {
	c.entry("TRAILER!!!", 0, 0, 0, nil)
	return c.err
}

func (c *Cpio) entry(name string, mode uint32, rmajor, rminor int, data []byte) {
	if c.err != nil {
		return
	}
	name = path.Clean(name)
	nlink := 1
	if mode&syscall.S_IFMT == syscall.S_IFDIR {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rmajor, rminor, len(name)+1, 0)
	c.ino++
	c.write([]byte(hdr))
	c.write(append([]byte(name), 0))
	c.pad(len(hdr) + len(name) + 1)
	c.write(data)
	c.pad(len(data))
}

func (c *Cpio) write(b []byte) {
	if c.err == nil && len(b) > 0 {
		_, c.err = c.w.Write(b)
	}
}

// pad writes the NULs that bring n up to a multiple of 4.
func (c *Cpio) pad(n int) {
	if r := n % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}
