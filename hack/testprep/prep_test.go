package testprep

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// run runs hack/test-prep.sh with the given job commands and returns its output and exit code. A run
// that outlives a minute fails the test: the script must not wait for a job it stopped.
func run(t *testing.T, jobs map[string]string) (string, int) {
	t.Helper()
	script, err := filepath.Abs("../test-prep.sh")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Env = os.Environ()
	for job, line := range jobs {
		cmd.Env = append(cmd.Env, "PREP_"+job+"="+line)
	}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("test-prep.sh still running after a minute:\n%s", out)
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	default:
		t.Fatalf("run test-prep.sh: %v", err)
		return "", -1
	}
}

func TestEveryJobRunsAndItsLogIsPrintedWithItsTime(t *testing.T) {
	out, code := run(t, map[string]string{
		"K8S_BINS": "echo /cache/k8s/bin; echo niceness $(nice)",
		"LINT":     "echo 'go: downloading a v1'; echo 'go: downloading b v2'; echo lint: go vet; echo niceness $(nice)",
		"HELM":     "echo /cache/bin/helm",
		"PACKAGES": "echo installed",
	})
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
	for _, want := range []string{
		"[k8s-bins] /cache/k8s/bin", "[helm] /cache/bin/helm", "[packages] installed",
		"[lint] lint: go vet", "[lint] (2 module downloads)",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("output lacks the line %q:\n%s", want, out)
		}
	}
	// lint runs 10 nicer than the Kubernetes build (at most 19), so that the build keeps the CPU.
	build, lint := niceness(t, out, "k8s-bins"), niceness(t, out, "lint")
	if want := min(19, build+10); lint != want {
		t.Errorf("lint ran at niceness %d, the Kubernetes build at %d: want lint at %d", lint, build, want)
	}
	if regexp.MustCompile(`(?m)^\[lint\] go: downloading`).MatchString(out) {
		t.Errorf("module download lines are listed, not counted:\n%s", out)
	}
	for _, job := range []string{"k8s-bins", "lint", "helm", "packages"} {
		if !regexp.MustCompile(`(?m)^test-prep: ` + job + ` done in \d+s$`).MatchString(out) {
			t.Errorf("no line says when %s was done:\n%s", job, out)
		}
	}
}

func TestTheJobsRunSideBySide(t *testing.T) {
	// Each job waits until all four have started: run one after the other, they would wait forever
	// (the script's run gets a minute).
	dir := t.TempDir()
	line := func(name string) string {
		return "touch " + filepath.Join(dir, name) + "; until [ $(ls " + dir + " | wc -l) -eq 4 ]; do sleep 0.05; done; echo all four started"
	}
	out, code := run(t, map[string]string{"K8S_BINS": line("a"), "LINT": line("b"), "HELM": line("c"), "PACKAGES": line("d")})
	if code != 0 || strings.Count(out, "] all four started\n") != 4 {
		t.Fatalf("exit %d, want 0 with four jobs that saw each other start:\n%s", code, out)
	}
}

func TestTheFirstFailureStopsTheOtherJobsAndIsTheExitStatus(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	out, code := run(t, map[string]string{
		// The Kubernetes build would take five minutes; its child (sleep) must be stopped with it.
		"K8S_BINS": "sleep 300 & echo $! > " + pidFile + "; wait",
		"LINT":     "until [ -s " + pidFile + " ]; do sleep 0.05; done; echo 'gofmt needed on: x.go'; exit 3",
		"HELM":     "true",
		"PACKAGES": "true",
	})
	if code != 3 {
		t.Fatalf("exit %d, want lint's 3:\n%s", code, out)
	}
	if !strings.Contains(out, "[lint] gofmt needed on: x.go\n") {
		t.Errorf("lint's log is not printed:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^test-prep: lint failed \(exit 3\) after \d+s; stopping the others .*: (\S+ )*k8s-bins( \S+)*$`).MatchString(out) {
		t.Errorf("no line names lint's failure and the stopped Kubernetes build:\n%s", out)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	// The stopped job's sleep is gone once it is reaped (by init: its parent is gone too); a bounded
	// wait for that, not a measure of speed.
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the stopped job's child %d still runs after the script ended:\n%s", pid, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// niceness is the niceness job printed ("[job] niceness N").
func niceness(t *testing.T, out, job string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\[` + job + `\] niceness (\d+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("%s printed no niceness:\n%s", job, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// alive reports whether pid is a live process (not gone, not a zombie).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command's closing parenthesis.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
