package cgroupfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
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

// ProcessCount counts the processes in cgroup rel and every cgroup below it (cgroup.procs lines), which
// is what the kubelet reports as a pod's process count.
func (l Layout) ProcessCount(rel string) (uint64, error) {
	var n uint64
	err := filepath.WalkDir(filepath.Join(l.Memory, rel), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		c, err := readFile(p, parse.Lines)
		n += c
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
