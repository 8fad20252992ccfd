package agent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestDefaultConfigIsAFileWithOnlyTheNodeName: the defaults the tests and the e2e agents start from are
// the real agent's, as pressure-agent resolves them without a file or flag.
func TestDefaultConfigIsAFileWithOnlyTheNodeName(t *testing.T) {
	t.Setenv("NODE_NAME", "node-a")
	resolved, err := resolve(t)
	if err != nil {
		t.Fatal(err)
	}
	quantities := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
	if d := cmp.Diff(DefaultConfig("node-a"), resolved, quantities, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("DefaultConfig differs from the resolved defaults (-DefaultConfig +resolved):\n%s", d)
	}
}
