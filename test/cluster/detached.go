package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// DetachedOptions configure Up.
type DetachedOptions struct {
	// StateDir holds the cluster (default ${PRESSURE_STATE:-<CacheDir>/cluster}); Up wipes it.
	StateDir string
	// Binaries as for StartControlPlane.
	Binaries Binaries
	// Node also starts a level-2 node.
	Node bool
	// KubeletConfig is merged onto DefaultKubeletConfig for the node (see NodeOptions).
	KubeletConfig *kubeletv1beta1.KubeletConfiguration
	// Progress receives one line per step (may be nil).
	Progress func(string)
}

// DefaultStateDir is ${PRESSURE_STATE:-<CacheDir>/cluster}.
func DefaultStateDir() string {
	if d := os.Getenv("PRESSURE_STATE"); d != "" {
		return d
	}
	return filepath.Join(CacheDir(), "cluster")
}

// Up starts a cluster that outlives the calling program and records it in
// <StateDir>/state.json. When that file names a cluster whose processes all still run, Up
// returns it unchanged (already=true); a partly dead one is taken down first.
func Up(ctx context.Context, opts DetachedOptions) (s State, already bool, err error) {
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	if opts.StateDir == "" {
		opts.StateDir = DefaultStateDir()
	}
	statePath := StatePath(opts.StateDir)
	if old, err := ReadState(statePath); err == nil {
		hasNode := old.Node != nil
		if len(old.Alive()) == len(old.Processes) && len(old.Processes) > 0 && hasNode == opts.Node {
			return old, true, nil
		}
		progress("taking down the previous cluster recorded in " + statePath)
		if err := old.Down(); err != nil {
			return s, false, err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return s, false, err
	}
	if err := unmountUnder(opts.StateDir); err != nil {
		return s, false, err
	}
	if err := os.RemoveAll(opts.StateDir); err != nil {
		return s, false, fmt.Errorf("wipe %s: %w", opts.StateDir, err)
	}
	if err := os.MkdirAll(opts.StateDir, 0o755); err != nil {
		return s, false, fmt.Errorf("create state dir: %w", err)
	}
	progress("starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler in " + opts.StateDir)
	cp, err := StartControlPlane(ctx, ControlPlaneOptions{Binaries: opts.Binaries, Dir: opts.StateDir})
	if err != nil {
		return s, false, err
	}
	s = State{Dir: cp.Dir(), Kubeconfig: cp.Kubeconfig(), Server: cp.Server(), Processes: cp.Processes()}
	if err := WriteState(statePath, s); err != nil {
		_ = cp.Stop()
		return s, false, err
	}
	if !opts.Node {
		return s, false, nil
	}
	progress("starting containerd and kubelet (first waits for the node lock " + NodeLockPath + " while another node runs)")
	node, err := StartNode(ctx, cp, NodeOptions{Dir: filepath.Join(opts.StateDir, "node"), KubeletConfig: opts.KubeletConfig, Progress: opts.Progress})
	if err != nil {
		_ = cp.Stop()
		_ = os.Remove(statePath)
		return s, false, err
	}
	s.Processes = append(s.Processes, node.Processes()...)
	if err := node.markDetached(opts.StateDir); err != nil {
		_ = node.Stop()
		_ = cp.Stop()
		_ = os.Remove(statePath)
		return s, false, err
	}
	clean := node.Cleanup()
	s.Node = &clean
	if err := WriteState(statePath, s); err != nil {
		_ = node.Stop()
		_ = cp.Stop()
		return s, false, err
	}
	return s, false, nil
}

// Down stops the cluster recorded in stateDir (only its recorded PIDs) and cleans up its node;
// without a state file it still cleans up after a crashed node when no node runs.
func Down(stateDir string) error {
	if stateDir == "" {
		stateDir = DefaultStateDir()
	}
	statePath := StatePath(stateDir)
	s, err := ReadState(statePath)
	switch {
	case err == nil:
		if err := s.Down(); err != nil {
			return err
		}
		if err := os.Remove(statePath); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove state: %w", err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if _, err := CleanStaleNode(NodeLockPath); err != nil {
		return err
	}
	return nil
}
