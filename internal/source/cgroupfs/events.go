package cgroupfs

// memory.events (cgroup v2), documented in https://docs.kernel.org/admin-guide/cgroup-v2.html:
//
//	low 0
//	high 12
//	max 3
//	oom 1
//	oom_kill 1
//	oom_group_kill 0

import (
	"io"
	"path/filepath"

	"github.com/kube-pressure/pressure/internal/source/parse"
)

// MemoryEvents holds the counters of memory.events. A nil field was not in the file (older kernels lack
// oom_group_kill; some lack sock_throttled).
type MemoryEvents struct {
	Low, High, Max, OOM, OOMKill, OOMGroupKill *uint64
}

// ParseMemoryEvents parses memory.events; unknown keys are ignored, malformed lines are errors.
func ParseMemoryEvents(r io.Reader, path string) (MemoryEvents, error) {
	kv, err := parse.KeyValues(r, path)
	if err != nil {
		return MemoryEvents{}, err
	}
	get := func(k string) *uint64 {
		if v, ok := kv[k]; ok {
			return &v
		}
		return nil
	}
	return MemoryEvents{Low: get("low"), High: get("high"), Max: get("max"), OOM: get("oom"),
		OOMKill: get("oom_kill"), OOMGroupKill: get("oom_group_kill")}, nil
}

// MemoryEvents reads memory.events of cgroup rel (v2 only; a v1 tree has no such file, so the error
// wraps fs.ErrNotExist).
func (l Layout) MemoryEvents(rel string) (MemoryEvents, error) {
	return readFile(filepath.Join(l.Memory, rel, "memory.events"), ParseMemoryEvents)
}
