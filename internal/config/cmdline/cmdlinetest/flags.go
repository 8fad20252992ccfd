package cmdlinetest

import (
	"testing"

	"github.com/spf13/pflag"
)

// Flag is a flag as the user sees it: name, shorthand, type and default.
type Flag struct {
	Name, Shorthand, Type, Default string
}

// CommonFlags are the flags pressure-agent and pressure-janitor both take, with their defaults.
// Written out here, not derived from cmdline.Flags: a change to a name or a default fails this
// package's users instead of passing silently.
func CommonFlags() []Flag {
	return []Flag{
		{Name: "config", Type: "string"},
		{Name: "kubeconfig", Type: "string"},
		{Name: "dry-run", Type: "bool", Default: "false"},
		{Name: "metrics-bind-address", Type: "string", Default: ":8080"},
		{Name: "health-probe-bind-address", Type: "string", Default: ":8081"},
		{Name: "version", Type: "bool", Default: "false"},
		{Name: "log-level", Type: "string", Default: "info"},
		{Name: "v", Shorthand: "v", Type: "int", Default: "0"},
		{Name: "profiling", Type: "bool", Default: "false"},
	}
}

// CheckCommonFlags fails t unless fs has every common flag with its shorthand, type and default.
func CheckCommonFlags(t testing.TB, fs *pflag.FlagSet) {
	t.Helper()
	for _, want := range CommonFlags() {
		f := fs.Lookup(want.Name)
		if f == nil {
			t.Errorf("no --%s: both daemons take it", want.Name)
			continue
		}
		got := Flag{Name: f.Name, Shorthand: f.Shorthand, Type: f.Value.Type(), Default: f.DefValue}
		if got != want {
			t.Errorf("--%s is %+v, want %+v", want.Name, got, want)
		}
	}
}
