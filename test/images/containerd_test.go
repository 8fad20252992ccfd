package images

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/testenv"
)

// requireContainerd skips (or, with CI set, fails) unless we are root and containerd and ctr
// are installed.
func requireContainerd(t *testing.T) (containerd, ctr string) {
	t.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "not root")
	}
	containerd, err1 := exec.LookPath("containerd")
	ctr, err2 := exec.LookPath("ctr")
	if err1 != nil || err2 != nil {
		missing = append(missing, "containerd or ctr not in PATH (apt-get install -y containerd)")
	}
	if len(missing) > 0 {
		testenv.SkipOrFail(t, "containerd import test needs root and containerd: %s", strings.Join(missing, "; "))
	}
	return containerd, ctr
}

// privateContainerd starts containerd with its own config, root, state and socket under a temp
// dir (CRI plugin disabled), and stops exactly that process at cleanup. It returns the socket.
func privateContainerd(t *testing.T, bin string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pressure-ctd-") // short: the socket path must fit 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "containerd.sock")
	config := fmt.Sprintf("version = 2\nroot = %q\nstate = %q\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n[grpc]\n  address = %q\n",
		filepath.Join(dir, "root"), filepath.Join(dir, "state"), sock)
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	var logBuf bytes.Buffer
	cmd := exec.Command(bin, "--config", filepath.Join(dir, "config.toml"))
	cmd.Stdout, cmd.Stderr = &logBuf, &logBuf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start containerd: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return sock
		}
		select {
		case <-exited:
			t.Fatalf("containerd exited during start:\n%s", logBuf.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("containerd socket %s not up within 20s:\n%s", sock, logBuf.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func runCtr(t *testing.T, ctr, sock string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	full := append([]string{"--address", sock, "-n", "k8s.io"}, args...)
	out, err := exec.CommandContext(ctx, ctr, full...).CombinedOutput()
	if err != nil {
		t.Fatalf("ctr %s: %v\n%s", strings.Join(full, " "), err, out)
	}
	return string(out)
}

func TestCtrImportNamesImagesAndTheStressImageRuns(t *testing.T) {
	containerd, ctr := requireContainerd(t)
	imgs := shared.get(t)
	sock := privateContainerd(t, containerd)
	for _, img := range imgs {
		runCtr(t, ctr, sock, "images", "import", img.Tarball)
	}
	listed := map[string]bool{}
	for _, name := range strings.Fields(runCtr(t, ctr, sock, "images", "ls", "-q")) {
		listed[name] = true
	}
	for _, img := range imgs {
		if !listed[img.Name] {
			t.Errorf("after import, ctr images ls -q = %v, missing %s", listed, img.Name)
		}
	}
	t.Run("stress image runs under runc", func(t *testing.T) {
		if _, err := exec.LookPath("runc"); err != nil {
			testenv.SkipOrFail(t, "runc not in PATH, cannot run a container: %v", err)
		}
		out := runCtr(t, ctr, sock, "run", "--rm", StressName, "pressure-images-test",
			"/stress", "mem", "--rate", "0", "--target", "8Mi", "--hold=false")
		if !strings.Contains(out, `"event":"target","bytes":8388608`) {
			t.Errorf("container output lacks the target line:\n%s", out)
		}
	})
}
