//go:build linux

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kube-pressure/pressure/internal/explain"
	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/podfs"
	"github.com/kube-pressure/pressure/internal/source/procfs"
	"github.com/kube-pressure/pressure/internal/source/statfs"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// defaultCgroupRoot is the default of --cgroup-root.
const defaultCgroupRoot = cgroupfs.DefaultRoot

// LocalInput reads the node this runs on through internal/source and returns the explain input: live
// signals stamped with now, each pod's local volumes and logs measured as pressure-agent measures them
// (podfs, when the kubelet root dir has a pods directory), thresholds from opts.KubeletConfig or the
// kubelet's defaults, and capacity for the allocatable math from MemTotal (memory), statfs of the
// kubelet root dir (ephemeral-storage) and min(pid_max, threads-max) (pid). Signals that cannot be read become warnings, never zeros; only
// an unreadable or invalid kubelet config is an error.
func LocalInput(opts LocalOptions, now time.Time) (explain.Input, error) {
	cfg, isolation, err := localConfig(opts.KubeletConfig)
	if err != nil {
		return explain.Input{}, err
	}
	in := explain.Input{Node: opts.Node, Source: LocalSource, Now: now, Config: cfg, Capacity: map[string]int64{},
		DisableLocalStorageCapacityIsolation: !isolation}
	proc := procfs.NewReader(opts.ProcRoot)
	node := &source.Node{Proc: proc}
	if layout, err := (cgroupfs.Detector{Root: opts.CgroupRoot}).Detect(); err != nil {
		in.Warnings = append(in.Warnings, fmt.Sprintf("memory.available, allocatableMemory.available and pod "+
			"usage are not observed: %v", err))
	} else {
		node.Cgroup = &cgroupfs.Reader{Layout: layout}
	}
	nodefs := isDir(opts.KubeletRootDir)
	if nodefs {
		node.Disk = &statfs.Reader{NodefsPath: opts.KubeletRootDir, ImagefsPath: existingDir(opts.RuntimeRoot), Statfser: statfs.Unix{}}
		node.PodFS, in.Warnings = podFS(opts, in.Warnings)
	} else {
		in.Warnings = append(in.Warnings, fmt.Sprintf("nodefs is not observed: kubelet root dir %s does not exist "+
			"(set --kubelet-root-dir)", opts.KubeletRootDir))
	}
	if !isDir(opts.RuntimeRoot) {
		in.Warnings = append(in.Warnings, fmt.Sprintf("imagefs is not observed: runtime root %s does not exist "+
			"(set --runtime-root)", opts.RuntimeRoot))
	}
	snap, err := node.Snapshot(now)
	in.Warnings = append(in.Warnings, errorLines(err)...)
	if !nodefs && isDir(opts.RuntimeRoot) {
		in.Warnings = append(in.Warnings, imagefsOnly(&snap, opts.RuntimeRoot, now)...)
	}
	in.Snapshot = snap
	if total, err := proc.MemTotal(); err == nil {
		in.Capacity[threshold.ResourceMemory] = int64(total)
	}
	if o, ok := snap.Observations[signal.NodeFsAvailable]; ok {
		in.Capacity[threshold.ResourceEphemeralStorage] = o.Capacity
	}
	if o, ok := snap.Observations[signal.PIDAvailable]; ok {
		in.Capacity[threshold.ResourcePID] = o.Capacity
	}
	return in, nil
}

// podFS returns the reader of the pods' local volumes and logs, the one pressure-agent uses, or nil with
// a warning when the kubelet root dir has no pods directory.
func podFS(opts LocalOptions, warnings []string) (*podfs.Reader, []string) {
	pods := filepath.Join(opts.KubeletRootDir, "pods")
	if !isDir(pods) {
		return nil, append(warnings, fmt.Sprintf("per-pod disk usage is not measured: %s does not exist (set "+
			"--kubelet-root-dir): pods are ranked for disk signals without it", pods))
	}
	logs := existingDir(opts.PodLogsDir)
	if logs == "" && opts.PodLogsDir != "" {
		warnings = append(warnings, fmt.Sprintf("the pods' logs are not measured: %s does not exist (set --pod-logs-dir)",
			opts.PodLogsDir))
	}
	return &podfs.Reader{KubeletRootDir: opts.KubeletRootDir, PodLogsDir: logs, MinInterval: -1}, warnings
}

// localConfig parses the eviction configuration and localStorageCapacityIsolation of file, or the
// kubelet's defaults when file is "".
func localConfig(file string) (threshold.Config, bool, error) {
	var tin threshold.Input
	isolation := true
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return threshold.Config{}, false, fmt.Errorf("--kubelet-config: %w", err)
		}
		defer f.Close()
		kc, err := kubeconv.LoadKubeletConfig(f, file)
		if err != nil {
			return threshold.Config{}, false, err
		}
		tin, isolation = kc.ThresholdInput(), kc.LocalStorageCapacityIsolation()
	}
	cfg, err := threshold.ParseConfig(tin)
	if err != nil {
		name := file
		if name == "" {
			name = "kubelet defaults"
		}
		return threshold.Config{}, false, &FileError{File: name, Err: err}
	}
	return cfg, isolation, nil
}

// imagefsOnly observes imagefs and containerfs when nodefs cannot be: the layout is then unknown and
// reported as shared, the kubelet's default.
func imagefsOnly(snap *signal.Snapshot, runtimeRoot string, now time.Time) []string {
	res, err := (&statfs.Reader{NodefsPath: runtimeRoot, ImagefsPath: runtimeRoot, Statfser: statfs.Unix{}}).Observe(now)
	if err != nil {
		return errorLines(err)
	}
	for _, sig := range []signal.Signal{signal.ImageFsAvailable, signal.ImageFsInodesFree,
		signal.ContainerFsAvailable, signal.ContainerFsInodesFree} {
		if o, ok := res.Observations[sig]; ok {
			snap.Observations[sig] = o
		}
	}
	return []string{"filesystem layout unknown without nodefs: imagefs is assumed to share it"}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func existingDir(p string) string {
	if isDir(p) {
		return p
	}
	return ""
}
