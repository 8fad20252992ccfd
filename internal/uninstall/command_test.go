package uninstall

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestBadFlagsAreRefusedNamingTheFlagBeforeAnyAPICall(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a missing namespace", []string{"--daemonset=a"}, "flag --namespace: required"},
		{"a missing daemonset", []string{"--namespace=ns"}, "flag --daemonset: required"},
		{"an empty taint key", []string{"--namespace=ns", "--daemonset=a", "--taint-key="}, "flag --taint-key: must not be empty"},
		{"a zero stop timeout", []string{"--namespace=ns", "--daemonset=a", "--agent-stop-timeout=0s"}, "flag --agent-stop-timeout: value 0s: must be positive"},
		{"a negative poll interval", []string{"--namespace=ns", "--daemonset=a", "--poll-interval=-1s"}, "flag --poll-interval: value -1s: must be positive"},
		{"a stop timeout that is no duration", []string{"--namespace=ns", "--daemonset=a", "--agent-stop-timeout=soon"}, `invalid argument "soon" for "--agent-stop-timeout"`},
		{"an argument after the flags", []string{"--namespace=ns", "--daemonset=a", "now"}, "cleanup: unexpected arguments now"},
		{"a bad log level", []string{"--namespace=ns", "--daemonset=a", "--log-level=loud"}, "loud"},
		{"a kubeconfig that does not exist", []string{"--namespace=ns", "--daemonset=a", "--kubeconfig=/nonexistent/kubeconfig"}, "kubeconfig /nonexistent/kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := Main("pressure-agent", tc.args, &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Main(%q) = %v, want an error containing %q", tc.args, err, tc.want)
			}
			if out.Len() != 0 {
				t.Errorf("Main(%q) printed %q on stdout before failing", tc.args, out.String())
			}
		})
	}
}

func TestHelpPrintsTheUsageAndIsNoError(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := Main("pressure-agent", []string{"--help"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pressure-agent cleanup --namespace NS --daemonset NAME", "--agent-stop-timeout", "--taint-key"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("help does not mention %q:\n%s", want, errOut.String())
		}
	}
}

func TestSummarySaysWhatTheCleanupDid(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Report
		want string
	}{
		{"stopped, nothing left", Report{Stopped: true, StopTook: 1500 * time.Millisecond},
			"agents of ns/a stopped in 1.5s; no node had taint k left"},
		{"still stopping, two nodes cleared", Report{StopTook: time.Minute, Untainted: []string{"n1", "n2"}},
			"agents of ns/a still stopping after 1m0s; taint k removed from 2 node(s): n1, n2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Summary("ns/a", "k"); got != tc.want {
				t.Errorf("Summary = %q, want %q", got, tc.want)
			}
		})
	}
}
