package agent

import (
	"errors"
	"io"

	"github.com/kube-pressure/pressure/internal/config/configfile"
)

// ErrNotAgentConfiguration reports a file whose apiVersion or kind is not ours.
var ErrNotAgentConfiguration = errors.New("not a " + Kind + " " + APIVersion)

var fileKind = configfile.Kind{APIVersion: APIVersion, Kind: Kind, Wrong: ErrNotAgentConfiguration}

// Load decodes an AgentConfiguration (YAML or JSON) from r strictly: unknown or duplicate fields are
// errors, and apiVersion and kind must be ours. name (the file path) prefixes every error.
func Load(r io.Reader, name string) (*AgentConfiguration, error) {
	return configfile.Decode[AgentConfiguration](r, name, fileKind)
}

// LoadFile opens path and calls Load.
func LoadFile(path string) (*AgentConfiguration, error) {
	return configfile.DecodeFile[AgentConfiguration](path, fileKind)
}

// Complete defaults, validates and converts a loaded configuration; file names the source in errors.
func Complete(c *AgentConfiguration, file string) (*Config, error) {
	SetDefaults(c)
	if err := Validate(c, file); err != nil {
		return nil, err
	}
	return Convert(c)
}

// Defaults is the configuration of a file that sets only nodeName, defaulted and converted but not
// validated (node may be empty): what internal/agent's DefaultConfig and the tests start from.
func Defaults(node string) *Config {
	c := &AgentConfiguration{NodeName: &node}
	SetDefaults(c)
	cfg, err := Convert(c)
	if err != nil { // only a headroom can fail to convert, and DefaultHeadroom's parse
		panic("internal/config/agent: the defaults do not convert: " + err.Error())
	}
	return cfg
}
