package cmdline

import (
	"github.com/spf13/pflag"

	"github.com/kube-pressure/pressure/internal/logging"
)

// Default addresses of the daemons' HTTP servers; "0" disables a server.
const (
	DefaultMetricsBindAddress     = ":8080"
	DefaultHealthProbeBindAddress = ":8081"
)

// Flags are the command-line flags both daemons take. The caller owns the FlagSet (flags live in
// package main); AddFlags only registers on it. A flag the user sets overrides the configuration file.
type Flags struct {
	ConfigFile             string
	Kubeconfig             string
	DryRun                 bool
	MetricsBindAddress     string
	HealthProbeBindAddress string
	Version                bool
	Logging                logging.Flags
	// Profiling serves Go's net/http/pprof under /debug/pprof/ on the metrics address.
	Profiling bool
}

// Usage holds the help texts of the common flags that differ between the daemons.
type Usage struct {
	Config string // --config
	DryRun string // --dry-run
}

// AddFlags registers the common flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet, u Usage) {
	fs.StringVar(&f.ConfigFile, "config", "", u.Config)
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "path of a kubeconfig file; empty means in-cluster")
	fs.BoolVar(&f.DryRun, "dry-run", false, u.DryRun)
	fs.StringVar(&f.MetricsBindAddress, "metrics-bind-address", DefaultMetricsBindAddress, "address of /metrics (\"0\" disables)")
	fs.StringVar(&f.HealthProbeBindAddress, "health-probe-bind-address", DefaultHealthProbeBindAddress,
		"address of /healthz and /readyz (\"0\" disables)")
	fs.BoolVar(&f.Version, "version", false, "print version, commit and Go version, then exit")
	fs.BoolVar(&f.Profiling, "profiling", false, "serve Go's /debug/pprof/ on the metrics address (CPU, heap and goroutine profiles)")
	f.Logging.AddFlags(fs)
}
