package procfs

// /proc/vmstat, documented in https://docs.kernel.org/admin-guide/mm/ (counters) and proc(5): one
// "name value" line per counter, e.g.
//
//	nr_active_file 234164
//	workingset_refault_file 284855
//	workingset_activate_file 184921
//
// Page counts except where the name says otherwise. Older kernels (before 5.9) spell the workingset
// counters without the _file suffix.

import (
	"io"

	"github.com/kube-pressure/pressure/internal/source/parse"
)

// ParseVmstat parses /proc/vmstat into a map of counters; path is used in errors. Every line must be
// "name value" with a non-negative integer value, and a repeated name is an error.
func ParseVmstat(r io.Reader, path string) (map[string]uint64, error) {
	return parse.KeyValues(r, path)
}

// Vmstat reads <root>/vmstat.
func (r *Reader) Vmstat() (map[string]uint64, error) {
	return withFile(r, "vmstat", ParseVmstat)
}
