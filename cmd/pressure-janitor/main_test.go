package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/config/cmdline/cmdlinetest"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// The janitor's process runs as a child of the test binary (so that its stderr is the process's own):
// $PRESSURE_TEST_JANITOR_ARGS holds its arguments.
func TestMain(m *testing.M) {
	if args := os.Getenv("PRESSURE_TEST_JANITOR_ARGS"); args != "" {
		os.Args = append([]string{binary}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestEveryLogLineIsJSONIncludingClientGos runs the janitor process against a real kube-apiserver with
// -v 6: its own lines (slog), client-go's leader election lines and request logs (klog) must all come
// out as the same JSON lines on stderr.
func TestEveryLogLineIsJSONIncludingClientGos(t *testing.T) {
	cp := clustertest.ControlPlane(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PRESSURE_TEST_JANITOR_ARGS=--kubeconfig "+cp.Kubeconfig()+
		" -v 6 --metrics-bind-address 0 --health-probe-bind-address 0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var got []string
	sawLease, sawRequest := false, false
	deadline := time.After(time.Minute)
	for !(sawLease && sawRequest) {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the janitor ended early; its log:\n%s", strings.Join(got, "\n"))
			}
			got = append(got, l)
			sawLease = sawLease || strings.Contains(strings.ToLower(l), "successfully acquired lease") // client-go leaderelection
			sawRequest = sawRequest || strings.Contains(l, cp.Server())                                // client-go's request log at -v 6
		case <-deadline:
			t.Fatalf("no leader election and request lines from client-go within a minute; the log:\n%s", strings.Join(got, "\n"))
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	for l := range lines {
		got = append(got, l)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("janitor after SIGTERM: %v", err)
	}
	for _, l := range got {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["time"] == nil || m["level"] == nil || m["msg"] == nil {
			t.Errorf("not a JSON log line with time, level and msg: %q", l)
		}
	}
	t.Logf("%d log lines, all JSON", len(got))
}

// TestTakesTheCommonDaemonFlags: the flags both daemons take keep their names and defaults (the other
// daemon's test checks the same list), and the daemon's own flags are still there.
func TestTakesTheCommonDaemonFlags(t *testing.T) {
	fs := command().FlagSet()
	cmdlinetest.CheckCommonFlags(t, fs)
	for _, name := range []string{"ttl", "keep-per-owner", "namespace", "exclude-namespace", "label-selector", "leader-elect", "profiling"} {
		if fs.Lookup(name) == nil {
			t.Errorf("no --%s", name)
		}
	}
}
