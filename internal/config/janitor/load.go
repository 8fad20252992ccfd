package janitor

import (
	"errors"
	"io"

	"github.com/kube-pressure/pressure/internal/config/configfile"
)

// ErrNotJanitorConfiguration reports a file whose apiVersion or kind is not ours.
var ErrNotJanitorConfiguration = errors.New("not a " + Kind + " " + APIVersion)

var fileKind = configfile.Kind{APIVersion: APIVersion, Kind: Kind, Wrong: ErrNotJanitorConfiguration}

// Load decodes a JanitorConfiguration from r strictly: unknown or duplicate fields are errors, and
// apiVersion and kind must be ours. name (the file path) prefixes every error.
func Load(r io.Reader, name string) (*JanitorConfiguration, error) {
	return configfile.Decode[JanitorConfiguration](r, name, fileKind)
}

// LoadFile opens path and calls Load.
func LoadFile(path string) (*JanitorConfiguration, error) {
	return configfile.DecodeFile[JanitorConfiguration](path, fileKind)
}
