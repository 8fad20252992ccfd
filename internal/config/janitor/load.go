package janitor

import (
	"errors"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"
)

// ErrNotJanitorConfiguration reports a file whose apiVersion or kind is not ours.
var ErrNotJanitorConfiguration = errors.New("not a " + Kind + " " + APIVersion)

// maxFileBytes bounds what Load reads: a configuration is a few hundred bytes.
const maxFileBytes = 1 << 20

// Load decodes a JanitorConfiguration from r strictly: unknown or duplicate fields are errors, and
// apiVersion and kind must be ours. name (the file path) prefixes every error.
func Load(r io.Reader, name string) (*JanitorConfiguration, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read: %w", name, err)
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxFileBytes)
	}
	var c JanitorConfiguration
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("%s: decode: %w", name, err)
	}
	if c.APIVersion != APIVersion || c.Kind != Kind {
		return nil, fmt.Errorf("%s: apiVersion %q kind %q: %w", name, c.APIVersion, c.Kind, ErrNotJanitorConfiguration)
	}
	return &c, nil
}

// LoadFile opens path and calls Load.
func LoadFile(path string) (*JanitorConfiguration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Load(f, path)
}
