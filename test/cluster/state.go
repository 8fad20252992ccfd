package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// State records a detached cluster (hack/cluster.sh) so a later command can print its
// environment or stop it, even after the starting program has exited or crashed.
type State struct {
	Dir        string `json:"dir"`
	Kubeconfig string `json:"kubeconfig"`
	Server     string `json:"server"`
	// Processes are in start order; Down stops them in reverse order (so kubelet and
	// containerd before the control plane, and kube-apiserver before etcd).
	Processes []*Process `json:"processes"`
	// Node is set while a level-2 node is part of the cluster.
	Node *NodeCleanup `json:"node,omitempty"`
}

// StateFileName is the name of the state file inside a detached cluster's directory.
const StateFileName = "state.json"

// WriteState writes s to path atomically.
func WriteState(path string, s State) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

// ReadState reads a state file; a missing file wraps os.ErrNotExist.
func ReadState(path string) (State, error) {
	var s State
	data, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("read state: %w", err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("read state %s: %w", path, err)
	}
	return s, nil
}

// Alive lists the recorded processes that still run.
func (s State) Alive() []*Process {
	var alive []*Process
	for _, p := range s.Processes {
		if p.Alive() {
			alive = append(alive, p)
		}
	}
	return alive
}

// Down stops the recorded processes (only those, by PID and start time) in reverse start
// order and, when a node was recorded, cleans up what the node created. It does not remove
// s.Dir.
func (s State) Down() error {
	var errs []error
	for i := len(s.Processes) - 1; i >= 0; i-- {
		if err := s.Processes[i].Stop(stopTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	if s.Node != nil {
		if err := s.Node.Clean(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// StatePath is <dir>/state.json.
func StatePath(dir string) string { return filepath.Join(dir, StateFileName) }
