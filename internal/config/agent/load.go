package agent

import (
	"errors"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"
)

// ErrNotAgentConfiguration reports a file whose apiVersion or kind is not ours.
var ErrNotAgentConfiguration = errors.New("not a " + Kind + " " + APIVersion)

// maxFileBytes bounds what Load reads: a configuration is a few hundred bytes.
const maxFileBytes = 1 << 20

// Load decodes an AgentConfiguration (YAML or JSON) from r strictly: unknown or duplicate fields are
// errors, and apiVersion and kind must be ours. name (the file path) prefixes every error.
func Load(r io.Reader, name string) (*AgentConfiguration, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read: %w", name, err)
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxFileBytes)
	}
	var c AgentConfiguration
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("%s: decode: %w", name, err)
	}
	if c.APIVersion != APIVersion || c.Kind != Kind {
		return nil, fmt.Errorf("%s: apiVersion %q kind %q: %w", name, c.APIVersion, c.Kind, ErrNotAgentConfiguration)
	}
	return &c, nil
}

// LoadFile opens path and calls Load.
func LoadFile(path string) (*AgentConfiguration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Load(f, path)
}

// Complete defaults, validates and converts a loaded configuration; file names the source in errors.
func Complete(c *AgentConfiguration, file string) (*Config, error) {
	SetDefaults(c)
	if err := Validate(c, file); err != nil {
		return nil, err
	}
	return Convert(c)
}
