package policy

import (
	"testing"

	"github.com/kube-pressure/pressure/internal/golden"
)

// TestScenarios runs every testdata/*.txt script (see machine for the language). Run with -rewrite to
// regenerate the expected output; only keep changes you understand.
func TestScenarios(t *testing.T) {
	golden.RunScripts(t, "testdata/*.txt", func() func(string) (string, error) { return newMachine().run })
}
