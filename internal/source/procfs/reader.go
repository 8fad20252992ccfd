package procfs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// DefaultRoot is where procfs is mounted on a normal host.
const DefaultRoot = "/proc"

// Reader reads kernel files below Root (for example "/proc", "/host/proc" or a testdata tree).
type Reader struct {
	Root string
}

// NewReader returns a Reader rooted at root; an empty root means DefaultRoot.
func NewReader(root string) *Reader {
	if root == "" {
		root = DefaultRoot
	}
	return &Reader{Root: root}
}

// path joins a file name relative to the procfs root.
func (r *Reader) path(rel string) string { return filepath.Join(r.Root, rel) }

// withFile opens root/rel and hands it to parse together with its full path.
func withFile[T any](r *Reader, rel string, parse func(io.Reader, string) (T, error)) (T, error) {
	p := r.path(rel)
	f, err := os.Open(p)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("procfs: %w", err)
	}
	defer f.Close()
	return parse(f, p)
}
