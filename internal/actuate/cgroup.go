package actuate

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
)

// DefaultPodsCgroup is the kubelet's pod cgroup root under each hierarchy (cgroupRoot "/" + "kubepods").
const DefaultPodsCgroup = "kubepods"

// killRounds bounds how often Kill re-reads cgroup.procs: a process may fork while being killed.
const killRounds = 10

// CgroupKiller stops a pod on the node by SIGKILLing every process in the pod's cgroups. It is the
// ladder's last rung, for hard pressure when the API cannot be reached: the kubelet notices the dead
// containers and, depending on the restart policy, restarts them; the memory is released at once.
type CgroupKiller struct {
	// Root is the cgroup mount root, e.g. /sys/fs/cgroup. The v1 memory controller is <Root>/memory.
	Root string
	// Pods is the kubelet's pod cgroup below each hierarchy; empty means DefaultPodsCgroup. With the
	// systemd driver the kubelet names it kubepods.slice, which PodCgroups derives.
	Pods string
}

// ErrNotPodCgroup reports a path that is not a pod's cgroup below the killer's root.
var ErrNotPodCgroup = errors.New("not a pod cgroup below the cgroup root")

func (k *CgroupKiller) pods() string {
	if k.Pods == "" {
		return DefaultPodsCgroup
	}
	return strings.Trim(k.Pods, "/")
}

// ErrBadPodRef reports a pod UID or QoS class that cannot name a pod cgroup: a UID that is not hex
// digits and dashes (a UUID, or the hash of a static pod), or a QoS class other than Guaranteed,
// Burstable and BestEffort. It keeps a forged or corrupt value from steering the kill into another
// cgroup ("..", "/").
var ErrBadPodRef = errors.New("not a pod uid and qos class")

// maxUIDLen bounds a pod UID (a UUID has 36 characters, a static pod's hash 32).
const maxUIDLen = 64

// qosDirs maps the QoS classes to their cgroup directory below the pods cgroup ("" for Guaranteed).
var qosDirs = map[string]string{"guaranteed": "", "burstable": "burstable", "besteffort": "besteffort"}

// validPodRef checks uid and qos and returns the QoS directory.
func validPodRef(qos string, uid types.UID) (string, error) {
	q, ok := qosDirs[strings.ToLower(qos)]
	if !ok {
		return "", fmt.Errorf("qos class %q: %w", qos, ErrBadPodRef)
	}
	if !validUID(string(uid)) {
		return "", fmt.Errorf("pod uid %q: %w", uid, ErrBadPodRef)
	}
	return q, nil
}

// validUID accepts hex digits in dash-separated groups, nothing else.
func validUID(uid string) bool {
	if uid == "" || len(uid) > maxUIDLen || uid[0] == '-' || uid[len(uid)-1] == '-' || strings.Contains(uid, "--") {
		return false
	}
	for _, c := range uid {
		if c != '-' && !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// PodCgroups returns every place the pod's cgroup can be, for cgroup v1 (memory controller) and v2,
// with the cgroupfs and the systemd driver. QoS "Guaranteed" pods live directly below the pods cgroup.
// A uid or qos that cannot name a pod cgroup is an error wrapping ErrBadPodRef.
func (k *CgroupKiller) PodCgroups(qos string, uid types.UID) ([]string, error) {
	q, err := validPodRef(qos, uid)
	if err != nil {
		return nil, err
	}
	pods := k.pods()
	fsName := filepath.Join(pods, q, "pod"+string(uid))
	slice := strings.TrimSuffix(filepath.Base(pods), ".slice")
	sdParent := filepath.Join(filepath.Dir(pods), slice+".slice")
	sdPod := slice + "-pod" + strings.ReplaceAll(string(uid), "-", "_") + ".slice"
	sdName := filepath.Join(sdParent, sdPod)
	if q != "" {
		sdName = filepath.Join(sdParent, slice+"-"+q+".slice", slice+"-"+q+"-pod"+strings.ReplaceAll(string(uid), "-", "_")+".slice")
	}
	return []string{
		filepath.Join(k.Root, "memory", fsName),
		filepath.Join(k.Root, "memory", sdName),
		filepath.Join(k.Root, fsName),
		filepath.Join(k.Root, sdName),
	}, nil
}

// KillPod kills the processes of every existing cgroup of the pod. It reports the number of processes
// signalled; a pod none of whose cgroups exists is an error wrapping fs.ErrNotExist.
func (k *CgroupKiller) KillPod(pod PodRef) (int, error) {
	dirs, err := k.PodCgroups(pod.QOSClass, pod.UID)
	if err != nil {
		return 0, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	total, found := 0, false
	var errs []error
	for _, dir := range dirs {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		found = true
		n, err := k.Kill(dir)
		total += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	if !found {
		return 0, fmt.Errorf("no cgroup of pod %s (qos %s) below %s: %w", pod.UID, pod.QOSClass, k.Root, fs.ErrNotExist)
	}
	return total, errors.Join(errs...)
}

// Kill SIGKILLs every process in dir and its descendant cgroups until they are empty or killRounds
// passes have been made. dir must lie below Root and its last element must name a pod ("pod" prefix
// or "-pod" infix). The calling process is never signalled.
//
// A PID read from cgroup.procs may belong to another process by the time it is signalled (the
// process exited and the PID was reused). So the first pass writes cgroup.kill where it can (cgroup
// v2, Linux 5.14+, a writable mount: the kernel kills the subtree atomically), and every other pass
// signals through pidfds (signalMembers): a PID is signalled only if, after its pidfd was opened,
// it is still listed in the cgroup.
func (k *CgroupKiller) Kill(dir string) (int, error) {
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

func (k *CgroupKiller) check(dir string) error {
	rel, err := filepath.Rel(filepath.Clean(k.Root), filepath.Clean(dir))
	base := filepath.Base(dir)
	isPod := strings.HasPrefix(base, "pod") || strings.Contains(base, "-pod")
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || !isPod {
		return fmt.Errorf("cgroup %s (root %s): %w", dir, k.Root, ErrNotPodCgroup)
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
