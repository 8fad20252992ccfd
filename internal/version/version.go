package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time by the Makefile; the defaults describe a plain `go build`.
var (
	Version = "v0.0.0-dev"
	Commit  = ""
)

// Info is the build identity printed by --version.
type Info struct {
	Binary    string `json:"binary"`
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the build identity of the running binary.
func Get(binary string) Info {
	commit := Commit
	if commit == "" {
		commit = vcsRevision()
	}
	return Info{
		Binary:    binary,
		Version:   Version,
		Commit:    commit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// String renders the identity on one line, as --version prints it.
func (i Info) String() string {
	return fmt.Sprintf("%s %s (commit %s, %s, %s)", i.Binary, i.Version, i.Commit, i.GoVersion, i.Platform)
}

func vcsRevision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return "unknown"
}
