package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kube-pressure/pressure/internal/source/parse"
)

// PodCgroup is one pod's cgroup below the pods cgroup.
type PodCgroup struct {
	UID string // with dashes, as in the API
	QOS string // "guaranteed", "burstable" or "besteffort"
	Rel string // path relative to Layout.Memory
}

// qosDirs lists, per driver, the QoS directories below the pods cgroup and the prefix and suffix of a
// pod directory name in each ("" is the guaranteed class, whose pods sit directly below the pods cgroup).
func qosDirs(d Driver) []struct{ qos, dir, prefix, suffix string } {
	if d == DriverSystemd {
		return []struct{ qos, dir, prefix, suffix string }{
			{"guaranteed", "", "kubepods-pod", ".slice"},
			{"burstable", "kubepods-burstable.slice", "kubepods-burstable-pod", ".slice"},
			{"besteffort", "kubepods-besteffort.slice", "kubepods-besteffort-pod", ".slice"},
		}
	}
	return []struct{ qos, dir, prefix, suffix string }{
		{"guaranteed", "", "pod", ""},
		{"burstable", "burstable", "pod", ""},
		{"besteffort", "besteffort", "pod", ""},
	}
}

// PodCgroups lists the pod cgroups below the pods cgroup, sorted by UID then path. A missing QoS
// directory is skipped (a node may have no best-effort pods yet); other read errors are returned.
func (l Layout) PodCgroups() ([]PodCgroup, error) {
	if l.Driver == DriverNone {
		return nil, nil
	}
	var out []PodCgroup
	for _, q := range qosDirs(l.Driver) {
		rel := filepath.Join(l.PodsCgroup, q.dir)
		entries, err := os.ReadDir(filepath.Join(l.Memory, rel))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, err
		}
		for _, e := range entries {
			uid, ok := podUID(e, q.prefix, q.suffix, l.Driver)
			if ok {
				out = append(out, PodCgroup{UID: uid, QOS: q.qos, Rel: filepath.Join(rel, e.Name())})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].UID != out[j].UID {
			return out[i].UID < out[j].UID
		}
		return out[i].Rel < out[j].Rel
	})
	return out, nil
}

// PodDirs returns the absolute directories of pod uid's cgroups (usually one; two while the kubelet
// moves a pod between QoS classes), found by listing (PodCgroups), never built from the UID, so no value
// can steer a caller into another cgroup. A UID with no listed cgroup is an error wrapping fs.ErrNotExist.
func (l Layout) PodDirs(uid string) ([]string, error) {
	cgs, err := l.PodCgroups()
	if err != nil {
		return nil, fmt.Errorf("list pod cgroups: %w", err)
	}
	var dirs []string
	for _, cg := range cgs {
		if cg.UID == uid {
			dirs = append(dirs, filepath.Join(l.Memory, cg.Rel))
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no cgroup of pod %s below %s: %w", uid, filepath.Join(l.Memory, l.PodsCgroup), fs.ErrNotExist)
	}
	return dirs, nil
}

// podUID extracts the pod UID from a directory name such as "pod<uid>" or
// "kubepods-burstable-pod<uid_with_underscores>.slice".
func podUID(e fs.DirEntry, prefix, suffix string, d Driver) (string, bool) {
	if !e.IsDir() {
		return "", false
	}
	name := e.Name()
	if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) || len(name) <= len(prefix)+len(suffix) {
		return "", false
	}
	uid := name[len(prefix) : len(name)-len(suffix)]
	if d == DriverSystemd {
		uid = strings.ReplaceAll(uid, "_", "-")
	}
	return uid, true
}

// Tasks counts the processes (cgroup.procs lines) and the threads (tasks on cgroup v1, cgroup.threads
// on v2) in cgroup rel and every cgroup below it. The process count is what the kubelet reports as a
// pod's process count; the thread count is what the pod holds of pid.available (the kernel's task
// count, threads included). Threads is nil when no thread file exists (a fixture tree without them).
func (l Layout) Tasks(rel string) (TaskCount, error) {
	return l.tasks(rel, make([]byte, 0, 4096))
}

// tasks is Tasks reading every file into buf.
func (l Layout) tasks(rel string, buf []byte) (TaskCount, error) {
	threadsFile := "tasks"
	if l.Version == V2 {
		threadsFile = "cgroup.threads"
	}
	var tc TaskCount
	var threads uint64
	seen := false
	count := func(path string) (uint64, bool, error) {
		b, err := readAllInto(path, buf[:0])
		if errors.Is(err, fs.ErrNotExist) {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("cgroupfs: %w", err)
		}
		buf = b
		return parse.CountLines(b), true, nil
	}
	err := walkCgroups(filepath.Join(l.Memory, rel), func(dir string) error {
		c, _, err := count(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			return err
		}
		tc.Processes += c
		c, ok, err := count(filepath.Join(dir, threadsFile))
		threads += c
		seen = seen || ok
		return err
	})
	if err != nil {
		return TaskCount{}, err
	}
	if seen {
		tc.Threads = &threads
	}
	return tc, nil
}

// TaskCount is what Tasks counts.
type TaskCount struct {
	Processes uint64
	Threads   *uint64
}

// PIDs lists the processes of the cgroup rel and of every cgroup below it (a pod's containers), from
// their cgroup.procs files, in the files' order.
func (l Layout) PIDs(rel string) ([]int, error) {
	var out []int
	err := walkCgroups(filepath.Join(l.Memory, rel), func(dir string) error {
		p := filepath.Join(dir, "cgroup.procs")
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cgroupfs: %w", err)
		}
		for i, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			if err != nil || pid <= 0 {
				return &parse.Error{Path: p, Line: i + 1, Value: f, Err: fmt.Errorf("not a process id")}
			}
			out = append(out, pid)
		}
		return nil
	})
	return out, err
}
