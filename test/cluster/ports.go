package cluster

import (
	"fmt"
	"net"
)

// freePorts returns n distinct TCP ports on 127.0.0.1 that were free a moment ago. All n
// listeners are open at once so the ports differ; another program may still take one before
// the daemon binds it, which then fails to start with a clear log line.
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
