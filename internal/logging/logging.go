package logging

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
)

// Flags are the logging flags of a daemon.
type Flags struct {
	// Level is --log-level: debug, info, warn or error.
	Level string
	// Verbosity is -v: the klog verbosity of the Kubernetes libraries, as in kubectl and the kubelet.
	// Their V(n) lines are slog level -n, so -v also lowers the handler's level to -n (-v 4 is debug).
	Verbosity int
}

// AddFlags registers --log-level and -v on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Level, "log-level", "info", "lowest level logged: debug, info, warn or error")
	fs.IntVarP(&f.Verbosity, "v", "v", 0, "verbosity of the Kubernetes client libraries (klog -v; 4 and up log API requests); lowers --log-level to match")
}

// ParseLevel parses a --log-level value.
func ParseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil || strings.ContainsAny(s, "+-") {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// Setup returns a JSON logger on w at the flags' level and routes klog through its handler with the
// flags' verbosity. It changes klog's process-wide state: call it once, from main.
func Setup(w io.Writer, f Flags) (*slog.Logger, error) {
	level, err := ParseLevel(f.Level)
	if err != nil {
		return nil, err
	}
	if f.Verbosity < 0 {
		return nil, fmt.Errorf("-v %d: want 0 or more", f.Verbosity)
	}
	level = min(level, slog.Level(-f.Verbosity))
	logger := slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: debugLevels}))
	var kfs flag.FlagSet
	klog.InitFlags(&kfs)
	if err := kfs.Set("v", strconv.Itoa(f.Verbosity)); err != nil {
		return nil, fmt.Errorf("-v %d: %w", f.Verbosity, err)
	}
	klog.SetSlogLogger(logger)
	return logger, nil
}

// debugLevels writes every level below info as "DEBUG": klog's V(n) lines are slog level -n,
// which slog would print as "DEBUG+3" for V(1).
func debugLevels(_ []string, a slog.Attr) slog.Attr {
	if l, ok := a.Value.Any().(slog.Level); ok && a.Key == slog.LevelKey && l < slog.LevelInfo {
		a.Value = slog.StringValue("DEBUG")
	}
	return a
}
