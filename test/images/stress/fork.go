package main

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// runFork starts count children, each this binary re-executed as `stress sleep` with its output
// discarded and SIGKILL as parent-death signal, logs {"event":"child","pid":P,"count":i} per
// child and {"event":"target","count":N}, then holds. On SIGTERM the children are killed first.
func runFork(lg *logger, args []string, onStop func(func())) error {
	fs := newFlagSet("fork")
	count := fs.Int("count", 0, "number of sleeping child processes")
	holdFlag := fs.Bool("hold", true, "after starting the children, hold until a signal instead of exiting 0")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *count < 0 {
		return fmt.Errorf("%w: --count must not be negative, got %d", errUsage, *count)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	var mu sync.Mutex
	var children []*os.Process
	var reaped sync.WaitGroup
	onStop(func() { // kill and reap, so no zombie outlives us
		mu.Lock()
		defer mu.Unlock()
		for _, c := range children {
			_ = c.Kill()
		}
		waitAtMost(&reaped, 2*time.Second)
	})
	for i := 1; i <= *count; i++ {
		cmd := exec.Command(self, "sleep")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start child %d of %d: %w", i, *count, err)
		}
		mu.Lock()
		children = append(children, cmd.Process)
		mu.Unlock()
		reaped.Add(1)
		go func() {
			defer reaped.Done()
			_ = cmd.Wait()
		}()
		lg.log(entry{Event: "child", PID: cmd.Process.Pid, Count: ptr(i)})
	}
	lg.log(entry{Event: "target", Count: ptr(*count)})
	if *holdFlag {
		hold(lg)
	}
	return nil
}

// waitAtMost waits for wg, giving up after d.
func waitAtMost(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
}
