package cli

import (
	"testing"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/janitor"
	"github.com/kube-pressure/pressure/internal/why"
)

// The verdict core cannot import the agent's and janitor's packages (client-go); its copies of their
// names must stay equal to theirs.
func TestWhyRecognisesTheNamesTheAgentAndJanitorWrite(t *testing.T) {
	for _, tc := range []struct{ name, got, want string }{
		{"agent component", why.ComponentAgent, actuate.Component},
		{"agent eviction reason", why.ReasonAgentEvicted, actuate.ReasonPressureEviction},
		{"janitor component", why.ComponentJanitor, janitor.Component},
		{"janitor evidence reason", why.ReasonJanitor, janitor.EventReason},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: why has %q, the component writes %q", tc.name, tc.got, tc.want)
		}
	}
}
