// Command pause is the sandbox ("pause") image of the test cluster. It sleeps until SIGTERM or
// SIGINT and then exits 0. Run as PID 1 it also reaps every zombie re-parented to it.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	pid1 := os.Getpid() == 1
	for sig := range sigs {
		if sig == syscall.SIGCHLD {
			if pid1 {
				reap()
			}
			continue
		}
		os.Exit(0)
	}
}

// reap collects every exited child without blocking.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
