package cgroupkill

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
)

// killRounds bounds how often Kill re-reads cgroup.procs: a process may fork while being killed.
const killRounds = 10

// Killer stops a pod on the node by SIGKILLing every process in the pod's cgroup. It is the agent's
// last resort (the ladder's rung for hard pressure when the API cannot be reached, and the trend kill
// when an OOM kill is closer than an eviction): the kubelet notices the dead containers and, depending
// on the restart policy, restarts them; the memory is released at once. The pod's cgroup is found
// where source/cgroupfs finds it (Layout.PodCgroups: cgroup v1 memory controller or v2, cgroupfs or
// systemd driver), never built from the UID, so no value can steer the kill into another cgroup.
type Killer struct {
	Layout cgroupfs.Layout
}

// ErrNotPodCgroup reports a path that is not a pod's cgroup below the layout's memory hierarchy.
var ErrNotPodCgroup = errors.New("not a pod cgroup below the cgroup root")

// ErrBadPodUID reports a pod UID that is not hex digits and dashes, the only characters of the UIDs
// the API server (UUIDs) and the kubelet (static pods: a hash) give pods.
var ErrBadPodUID = errors.New("pod uid is not hex digits and dashes")

// KillPod kills the processes of the pod's cgroup. It reports the number of processes signalled; a pod
// with no cgroup listed under the pods cgroup is an error wrapping fs.ErrNotExist, a UID with any
// other character than hex digits and dashes one wrapping ErrBadPodUID. The UID only selects among
// the listed pod cgroups, and the QoS class is the listing's, never a value from outside: the check
// keeps a UID such as ".." from matching a directory named "pod..".
func (k *Killer) KillPod(uid types.UID) (int, error) {
	if !validUID(string(uid)) {
		return 0, fmt.Errorf("kill pod %q: %w", uid, ErrBadPodUID)
	}
	dirs, err := k.Layout.PodDirs(string(uid))
	if err != nil {
		return 0, err
	}
	total := 0
	var errs []error
	for _, dir := range dirs {
		n, err := k.Kill(dir)
		total += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return total, errors.Join(errs...)
}

// Kill SIGKILLs every process in dir and its descendant cgroups until they are empty or killRounds
// passes have been made. dir must lie below the layout's memory hierarchy and its last element must
// name a pod ("pod" prefix or "-pod" infix). The calling process is never signalled.
//
// A PID read from cgroup.procs may belong to another process by the time it is signalled (the
// process exited and the PID was reused). So the first pass writes cgroup.kill where it can (cgroup
// v2, Linux 5.14+, a writable mount: the kernel kills the subtree atomically), and every other pass,
// or every pass where that write fails (no cgroup.kill on cgroup v1, EROFS on a read-only mount such
// as the chart's, this process inside the cgroup), signals through pidfds (signalMembers): a PID is
// signalled only if, after its pidfd was opened, it is still listed in the cgroup.
func (k *Killer) Kill(dir string) (int, error) {
	if err := k.check(dir); err != nil {
		return 0, err
	}
	self := os.Getpid()
	killed := map[int]bool{}
	for round := 0; round < killRounds; round++ {
		pids, err := CgroupProcs(dir)
		if err != nil {
			return len(killed), err
		}
		others := without(pids, self)
		if len(others) == 0 {
			return len(killed), nil
		}
		if round == 0 && len(others) == len(pids) && writeCgroupKill(dir) == nil {
			for _, pid := range others {
				killed[pid] = true
			}
			continue
		}
		hit, err := signalMembers(dir, others)
		for _, pid := range hit {
			killed[pid] = true
		}
		if err != nil {
			return len(killed), err
		}
	}
	return len(killed), nil
}

func validUID(uid string) bool {
	if uid == "" {
		return false
	}
	for _, c := range uid {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-') {
			return false
		}
	}
	return true
}

func (k *Killer) check(dir string) error {
	root := k.Layout.Memory
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(dir))
	base := filepath.Base(dir)
	isPod := strings.HasPrefix(base, "pod") || strings.Contains(base, "-pod")
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || !isPod {
		return fmt.Errorf("cgroup %s (root %s): %w", dir, root, ErrNotPodCgroup)
	}
	return nil
}

// writeCgroupKill writes "1" to cgroup.kill (cgroup v2, Linux 5.14+), which SIGKILLs the whole subtree
// at once. It fails where the file does not exist (cgroup v1), or when the cgroup holds this process.
func writeCgroupKill(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, "cgroup.kill"), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString("1"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func without(pids []int, pid int) []int {
	out := make([]int, 0, len(pids))
	for _, p := range pids {
		if p != pid {
			out = append(out, p)
		}
	}
	return out
}

// CgroupProcs returns the PIDs listed in cgroup.procs of dir and of every cgroup below it, ascending
// and without duplicates. A cgroup removed during the walk is skipped.
func CgroupProcs(dir string) ([]int, error) {
	seen := map[int]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != dir {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		pids, err := readProcs(filepath.Join(p, "cgroup.procs"))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		for _, pid := range pids {
			seen[pid] = true
		}
		return err
	})
	out := make([]int, 0, len(seen))
	for pid := range seen {
		out = append(out, pid)
	}
	sort.Ints(out)
	return out, err
}

func readProcs(path string) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pids, err := parseProcs(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pids, nil
}

// parseProcs reads one PID per line (cgroup.procs).
func parseProcs(r io.Reader) ([]int, error) {
	var pids []int
	s := bufio.NewScanner(r)
	for line := 1; s.Scan(); line++ {
		t := strings.TrimSpace(s.Text())
		if t == "" {
			continue
		}
		pid, err := strconv.Atoi(t)
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("line %d: pid %q: invalid", line, t)
		}
		pids = append(pids, pid)
	}
	return pids, s.Err()
}
