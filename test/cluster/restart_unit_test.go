package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNodeRestartStopsTheOldProcessAndKeepsTheNew(t *testing.T) {
	dir := t.TempDir()
	lock, err := os.Create(filepath.Join(dir, "lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	sleeper := func() (*Process, error) {
		return startProcess("sleeper", filepath.Join(dir, "sleeper.log"), []string{"/bin/sh", "-c", "sleep 30"}, nil, lock)
	}
	old, err := sleeper()
	if err != nil {
		t.Fatal(err)
	}
	n := &Node{name: "n", lock: lock}
	for _, tc := range []struct {
		name    string
		old     *Process
		start   func() (*Process, error)
		wantErr string
	}{
		{"a running process is stopped and replaced", old, sleeper, ""},
		{"a start that fails names the process, the node and the old pid", old, func() (*Process, error) { return nil, errors.New("boom") },
			"restart sleeper on node n (was pid"},
		{"a node without the process cannot restart it", nil, sleeper, "restart on node n: not started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := n.restart(tc.old, tc.start)
			if p != nil {
				defer func() { _ = p.Stop(stopTimeout) }()
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("restart error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.old.Alive() || !p.Alive() || p.PID == tc.old.PID {
				t.Errorf("after restart: old pid %d alive %t, new pid %d alive %t; want only a new one alive",
					tc.old.PID, tc.old.Alive(), p.PID, p.Alive())
			}
		})
	}
}
