package cluster

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
)

// errSyscallInUse is the errno a bind of a taken port gets.
var errSyscallInUse error = syscall.EADDRINUSE

// listenAll binds every port on 127.0.0.1, as a daemon does, and returns the listeners.
func listenAll(t *testing.T, ports []int) ([]net.Listener, error) {
	t.Helper()
	var ls []net.Listener
	for _, p := range ports {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return nil, fmt.Errorf("listen tcp 127.0.0.1:%d: %w", p, err)
		}
		ls = append(ls, l)
	}
	return ls, nil
}

func TestOnFreePortsStartsAgainWhenAPortIsTakenBeforeTheBind(t *testing.T) {
	var starts, resets int
	var stolen net.Listener
	var bound []net.Listener
	err := onFreePorts(3, portAttempts, func(ports []int) error {
		starts++
		if starts == 1 { // another process binds the second port between freePorts and the daemon
			var err error
			if stolen, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", ports[1])); err != nil {
				t.Fatalf("take port %d: %v", ports[1], err)
			}
		}
		ls, err := listenAll(t, ports)
		bound = ls
		return err
	}, func() error { resets++; return nil })
	defer func() {
		for _, l := range append(bound, stolen) {
			if l != nil {
				l.Close()
			}
		}
	}()
	if err != nil {
		t.Fatalf("onFreePorts = %v, want a start on fresh ports", err)
	}
	if starts != 2 || resets != 1 {
		t.Errorf("starts, resets = %d, %d; want 2, 1", starts, resets)
	}
	if len(bound) != 3 {
		t.Errorf("the second start bound %d ports, want 3", len(bound))
	}
}

func TestOnFreePortsGivesUpAfterItsAttemptsWithTheLastError(t *testing.T) {
	var starts int
	// A daemon's exit error: EADDRINUSE is only in the log tail it carries.
	inUse := errors.New("etcd (pid 1) exited; last lines of etcd.log:\nlisten tcp 127.0.0.1:1: bind: address already in use")
	err := onFreePorts(2, portAttempts, func([]int) error { starts++; return inUse },
		func() error { return nil })
	if starts != portAttempts || !errors.Is(err, inUse) || !strings.Contains(err.Error(), "3 sets of free ports") {
		t.Errorf("after %d starts: %v; want %d starts and an error wrapping the last", starts, err, portAttempts)
	}
}

func TestOnFreePortsReturnsOtherErrorsAtOnce(t *testing.T) {
	var starts, resets int
	other := errors.New("kube-apiserver (pid 1) not ready after 90s")
	err := onFreePorts(2, portAttempts, func([]int) error { starts++; return other },
		func() error { resets++; return nil })
	if !errors.Is(err, other) || starts != 1 || resets != 0 {
		t.Errorf("onFreePorts = %v after %d starts and %d resets; want the error after 1 start, no reset", err, starts, resets)
	}
}

func TestOnFreePortsStopsWhenTheResetFails(t *testing.T) {
	resetErr := errors.New("etcd (pid 1) still running after SIGKILL")
	err := onFreePorts(1, portAttempts, func([]int) error { return fmt.Errorf("bind: %w", errSyscallInUse) },
		func() error { return resetErr })
	if !errors.Is(err, resetErr) {
		t.Errorf("onFreePorts = %v, want the reset's error", err)
	}
}
