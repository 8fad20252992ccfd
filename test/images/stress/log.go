package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/threshold"
)

// errUsage marks a command-line error (exit code 2).
var errUsage = errors.New("usage error")

// entry is one log line. Field order in the output is the struct order: "t" and "event" first.
type entry struct {
	T      string   `json:"t"`
	Event  string   `json:"event"`
	Cmd    string   `json:"cmd,omitempty"`
	Args   []string `json:"args,omitempty"`
	PID    int      `json:"pid,omitempty"`
	Bytes  *int64   `json:"bytes,omitempty"`
	Target *int64   `json:"target,omitempty"`
	Rate   *int64   `json:"rate,omitempty"`
	Step   *int64   `json:"step,omitempty"`
	Count  *int     `json:"count,omitempty"`
	Sum    *int64   `json:"sum,omitempty"`
	Path   string   `json:"path,omitempty"`
	Signal string   `json:"signal,omitempty"`
	Error  string   `json:"error,omitempty"`
}

// logger writes entries as JSON lines, one write per line, stamped with RFC3339Nano UTC time.
type logger struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *logger) log(e entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.T == "" {
		e.T = time.Now().UTC().Format(time.RFC3339Nano)
	}
	b, err := json.Marshal(e)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"t":%q,"event":"error","error":%q}`, e.T, err.Error()))
	}
	_, _ = l.w.Write(append(b, '\n'))
}

func ptr[T any](v T) *T { return &v }

// quantity is a flag.Value holding a non-negative Kubernetes quantity in bytes.
type quantity int64

func (q *quantity) String() string {
	return resource.NewQuantity(int64(*q), resource.BinarySI).String()
}

func (q *quantity) Set(s string) error {
	v, err := threshold.ParseQuantity(s)
	if err != nil {
		return fmt.Errorf("parse quantity %q: %w", s, err)
	}
	if v.Sign() < 0 {
		return fmt.Errorf("quantity %q is negative", s)
	}
	// AsInt64, not Cmp against a limit: Cmp of a zero with a huge exponent ("E2000000003000003")
	// computes 10^exponent and never returns (found by FuzzQuantitySet).
	n, ok := v.AsInt64()
	if !ok || n > math.MaxInt64-1 {
		return fmt.Errorf("quantity %q exceeds %d bytes", s, int64(math.MaxInt64-1))
	}
	*q = quantity(n)
	return nil
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses args and rejects positional arguments; errors wrap errUsage.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}

// pacer spaces a ramp so that `done` bytes are reached at start + done/rate.
type pacer struct {
	start time.Time
	rate  int64 // bytes per second; 0 means unpaced
}

// wait sleeps until the moment the ramp should reach done bytes.
func (p pacer) wait(done int64) {
	if p.rate <= 0 {
		return
	}
	due := p.start.Add(time.Duration(float64(done) / float64(p.rate) * float64(time.Second)))
	if d := time.Until(due); d > 0 {
		time.Sleep(d)
	}
}

// nextChunk is the size of the next step: step, or what is left to reach target (0 = no target).
func nextChunk(done, step, target int64) int64 {
	if target > 0 && target-done < step {
		return target - done
	}
	return step
}
