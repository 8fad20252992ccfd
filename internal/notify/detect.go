package notify

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
)

// Mechanism says whether one wake-up mechanism works on this host, and why not when it does not.
type Mechanism struct {
	Name   string // "memcg-threshold", "psi", "memory-events", "poll"
	Target string // the file or cgroup it watches, or the interval for poll
	Active bool
	Reason string // why it is unavailable; empty when active
}

// String renders "memcg-threshold(/sys/fs/cgroup/memory) active" or "psi unavailable: <reason>".
func (m Mechanism) String() string {
	name := m.Name
	if m.Target != "" {
		name += "(" + m.Target + ")"
	}
	if m.Active {
		return name + " active"
	}
	return name + " unavailable: " + m.Reason
}

// Mechanisms is a detection result in a fixed order.
type Mechanisms []Mechanism

// String joins the descriptions with "; ".
func (ms Mechanisms) String() string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
	}
	return strings.Join(parts, "; ")
}

// DetectOptions says what to probe.
type DetectOptions struct {
	Layout cgroupfs.Layout
	// ProcRoot is the procfs root for node-wide PSI ("/proc").
	ProcRoot string
	// PSIWindow is the trigger window to probe with; 0 means 2s (the unprivileged minimum here).
	PSIWindow time.Duration
	// PollInterval is reported for the always-available poll fallback; 0 means DefaultPollInterval.
	PollInterval time.Duration
}

// Detect probes each mechanism for real (arming and disarming a memcg threshold and a PSI trigger,
// adding an inotify watch) and reports which work. It never fails: a failure is a Reason.
func Detect(o DetectOptions) Mechanisms {
	var out Mechanisms
	out = append(out, detectMemcg(o.Layout)...)
	out = append(out, detectPSI(o)...)
	out = append(out, detectEvents(o.Layout))
	iv := o.PollInterval
	if iv <= 0 {
		iv = DefaultPollInterval
	}
	return append(out, Mechanism{Name: "poll", Target: iv.String(), Active: true})
}

// memcgTargets are the cgroups the kubelet arms: the memory root and the pods cgroup.
func memcgTargets(l cgroupfs.Layout) []string {
	t := []string{l.Memory}
	if l.Driver != cgroupfs.DriverNone {
		t = append(t, filepath.Join(l.Memory, l.PodsCgroup))
	}
	return t
}

func detectMemcg(l cgroupfs.Layout) []Mechanism {
	if l.Version != cgroupfs.V1 {
		return []Mechanism{{Name: "memcg-threshold", Reason: "cgroup v2 has no memory threshold notifications"}}
	}
	var out []Mechanism
	for _, dir := range memcgTargets(l) {
		m := Mechanism{Name: "memcg-threshold", Target: dir, Active: true}
		if err := probeMemcg(dir); err != nil {
			m.Active, m.Reason = false, err.Error()
		}
		out = append(out, m)
	}
	return out
}

func probeMemcg(dir string) error {
	n, err := NewMemcgThreshold(dir)
	if err != nil {
		return err
	}
	defer n.Close()
	return n.SetThreshold(math.MaxInt64)
}

// psiTarget picks the memory.pressure file: the pods cgroup when cgroup2 has the memory controller,
// else the node-wide /proc/pressure/memory.
func psiTarget(o DetectOptions) (string, string) {
	l := o.Layout
	if l.Version == cgroupfs.V2 && l.Driver != cgroupfs.DriverNone {
		return filepath.Join(l.Memory, l.PodsCgroup, "memory.pressure"), ""
	}
	why := "no cgroup2 hierarchy"
	if l.Unified != "" && !l.UnifiedHasMemory {
		why = "no memory controller on cgroup2"
	} else if l.Version == cgroupfs.V2 {
		why = "no pods cgroup"
	}
	root := o.ProcRoot
	if root == "" {
		root = "/proc"
	}
	return filepath.Join(root, "pressure", "memory"), why
}

func detectPSI(o DetectOptions) []Mechanism {
	path, cgroupWhy := psiTarget(o)
	var out []Mechanism
	if cgroupWhy != "" {
		out = append(out, Mechanism{Name: "psi-cgroup", Reason: cgroupWhy})
	}
	win := o.PSIWindow
	if win <= 0 {
		win = 2 * time.Second
	}
	m := Mechanism{Name: "psi", Target: path, Active: true}
	if t, err := ArmPSI(path, "some", win/10, win); err != nil {
		m.Active, m.Reason = false, err.Error()
	} else {
		t.Close()
	}
	return append(out, m)
}

func detectEvents(l cgroupfs.Layout) Mechanism {
	m := Mechanism{Name: "memory-events"}
	if l.Version != cgroupfs.V2 || l.Driver == cgroupfs.DriverNone {
		m.Reason = "needs cgroup v2 memory.events of the pods cgroup"
		return m
	}
	m.Target = filepath.Join(l.Memory, l.PodsCgroup, "memory.events")
	if _, err := os.Stat(m.Target); errors.Is(err, os.ErrNotExist) {
		m.Reason = fmt.Sprintf("%s does not exist", m.Target)
		return m
	}
	w, err := WatchFile(m.Target)
	if err != nil {
		m.Reason = err.Error()
		return m
	}
	w.Close()
	m.Active = true
	return m
}
