// Command stress is the workload image of the pressure tests: it ramps memory, disk or process
// count at a controlled rate and logs every step to stdout as one JSON object per line, so a test
// can read from the pod's own log when a threshold was crossed.
//
//	stress mem  --rate 256Mi --target 3Gi [--step 4Mi] [--hold=true]
//	stress disk --path /data/fill --rate 64Mi --target 1Gi [--step 4Mi] [--hold=true]
//	stress fork --count N [--hold=true]
//	stress cache  --path /data/f --size 1Gi [--sparse] [--passes 2] [--hold=true]
//	stress thrash --path /data/f --size 3Gi [--sparse] [--random] [--warm QTY] [--passes 0] [--hold=true]
//	stress files --path DIR --count N [--rate N] [--hold=true]
//	stress sleep
//
// On SIGTERM or SIGINT it logs {"event":"sigterm"} and exits 3, so an evicted pod ends Failed
// (a container exiting 0 would end Succeeded). See ../README.md for the log format.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitSignal  = 3
	defaultStep = 4 << 20
)

const usage = `usage:
  stress mem  --rate QTY --target QTY [--step QTY] [--hold=BOOL]
  stress disk --path FILE --rate QTY --target QTY [--step QTY] [--hold=BOOL]
  stress fork --count N [--hold=BOOL]
  stress cache  --path FILE --size QTY [--sparse] [--passes N] [--hold=BOOL]
  stress thrash --path FILE --size QTY [--sparse] [--random] [--warm QTY] [--passes N] [--hold=BOOL]
  stress files --path DIR --count N [--rate N] [--hold=BOOL]
  stress sleep
QTY is a Kubernetes quantity (256Mi, 1Gi, 1G); --rate is per second, 0 means unpaced;
--target 0 means forever. SIGTERM/SIGINT: log {"event":"sigterm"} and exit 3.
`

// command is one subcommand: it parses its flags and then runs until done or forever.
type command func(lg *logger, args []string, onStop func(func())) error

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmds := map[string]command{"mem": runMem, "disk": runDisk, "fork": runFork, "files": runFiles, "sleep": runSleep,
		"cache": runCache, "thrash": runThrash}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "stress: unknown subcommand %q\n%s", args[0], usage)
		return exitUsage
	}
	lg := &logger{w: stdout}
	var hooks stopHooks
	watchSignals(lg, hooks.run)
	lg.log(entry{Event: "start", Cmd: args[0], PID: os.Getpid(), Args: args[1:]})
	err := cmd(lg, args[1:], hooks.add)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "stress %s: %v\n%s", args[0], err, usage)
		return exitUsage
	case err != nil:
		lg.log(entry{Event: "error", Error: err.Error()})
		return exitFailed
	}
	lg.log(entry{Event: "exit"})
	return exitOK
}

// watchSignals logs the first SIGTERM or SIGINT, runs stop and exits the process with code 3.
func watchSignals(lg *logger, stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		sig := <-sigs
		lg.log(entry{Event: "sigterm", Signal: sig.String()})
		stop()
		os.Exit(exitSignal)
	}()
}

// stopHooks are the clean-ups a subcommand registers for the signal path (killing children).
type stopHooks struct {
	mu  sync.Mutex
	fns []func()
}

func (h *stopHooks) add(fn func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fns = append(h.fns, fn)
}

func (h *stopHooks) run() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, fn := range h.fns {
		fn()
	}
}

// hold sleeps forever; the process ends only on a signal.
func hold(lg *logger) {
	lg.log(entry{Event: "hold"})
	for {
		time.Sleep(time.Hour)
	}
}

func runSleep(lg *logger, args []string, _ func(func())) error {
	fs := newFlagSet("sleep")
	if err := parse(fs, args); err != nil {
		return err
	}
	hold(lg)
	return nil
}
