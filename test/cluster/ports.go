package cluster

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
)

// freePorts returns n distinct TCP ports on 127.0.0.1 that were free a moment ago. All n
// listeners are open at once so the ports differ; another program (a test package running in
// parallel, or an outgoing connection given the port as its source) may still take one before the
// daemon binds it: onFreePorts retries the start when that happens.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// portAttempts is how many sets of ports StartControlPlane tries before it gives up.
const portAttempts = 3

// addrInUseText is how Go programs (etcd and the Kubernetes components) say a port is taken, in
// the log tail our start errors carry: "listen tcp 127.0.0.1:N: bind: address already in use".
const addrInUseText = "address already in use"

// isAddrInUse reports whether err says a port was taken: EADDRINUSE itself, or a daemon's exit
// error whose log tail says so.
func isAddrInUse(err error) bool {
	return err != nil && (errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), addrInUseText))
}

// onFreePorts calls start with n ports from freePorts. When start fails because a port was taken
// between freePorts and the bind (isAddrInUse), it calls reset to undo what start began and tries
// again with fresh ports, attempts times in all. Any other error is returned at once.
func onFreePorts(n, attempts int, start func(ports []int) error, reset func() error) error {
	var err error
	for i := range attempts {
		if i > 0 {
			if rerr := reset(); rerr != nil {
				return fmt.Errorf("reset after a port was taken (%v): %w", err, rerr)
			}
		}
		var ports []int
		if ports, err = freePorts(n); err != nil {
			return err
		}
		if err = start(ports); err == nil || !isAddrInUse(err) {
			return err
		}
	}
	return fmt.Errorf("%d sets of free ports were each taken before use, the last: %w", attempts, err)
}
