package cluster

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// binaryNames are the programs hack/build-k8s.sh builds.
func binaryNames() []string {
	return []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kubectl", "etcd"}
}

// Binaries is a directory holding the Kubernetes and etcd binaries.
type Binaries struct {
	Dir string
}

// Path returns the path of the named binary.
func (b Binaries) Path(name string) string { return filepath.Join(b.Dir, name) }

// Missing lists the binaries that are not executable files in Dir.
func (b Binaries) Missing() []string {
	var missing []string
	for _, n := range binaryNames() {
		fi, err := os.Stat(b.Path(n))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			missing = append(missing, n)
		}
	}
	return missing
}

// ErrNotBuilt is returned by FindBinaries when the binaries of the current pin are not built.
var ErrNotBuilt = errors.New("kubernetes binaries not built")

// RepoRoot finds the root of the pressure repository by walking up from dir to the go.mod of
// module github.com/kube-pressure/pressure.
func RepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find repo root: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module github.com/kube-pressure/pressure\n")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("find repo root: no go.mod of github.com/kube-pressure/pressure above %s", dir)
		}
	}
}

// CacheDir is ${PRESSURE_CACHE:-$HOME/.cache/pressure}.
func CacheDir() string {
	if d := os.Getenv("PRESSURE_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		home = "/root"
	}
	return filepath.Join(home, ".cache", "pressure")
}

// FindBinaries returns the binaries of the pin in <repo>/test/tools without building them:
// $PRESSURE_K8S_BIN when set, else the directory hack/build-k8s.sh builds into (the same
// version and hash of test/tools/go.mod and go.sum). It wraps ErrNotBuilt when some are missing.
func FindBinaries(repo string) (Binaries, error) {
	dir := os.Getenv("PRESSURE_K8S_BIN")
	if dir == "" {
		var err error
		dir, err = pinnedBinDir(repo)
		if err != nil {
			return Binaries{}, err
		}
	}
	b := Binaries{Dir: dir}
	if m := b.Missing(); len(m) > 0 {
		return b, fmt.Errorf("%w: %s missing in %s", ErrNotBuilt, strings.Join(m, ", "), dir)
	}
	return b, nil
}

// BuildBinaries runs hack/build-k8s.sh (a no-op when built) and returns the directory it prints.
// The script's progress goes to stderr.
func BuildBinaries(repo string, stderr *os.File) (Binaries, error) {
	cmd := exec.Command(filepath.Join(repo, "hack", "build-k8s.sh"))
	cmd.Dir = repo
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		return Binaries{}, fmt.Errorf("hack/build-k8s.sh: %w", err)
	}
	b := Binaries{Dir: strings.TrimSpace(string(out))}
	if m := b.Missing(); len(m) > 0 {
		return b, fmt.Errorf("hack/build-k8s.sh printed %s but %s missing there", b.Dir, strings.Join(m, ", "))
	}
	return b, nil
}

// pinnedBinDir mirrors hack/build-k8s.sh: <cache>/k8s-<version>-<sha256(go.mod+go.sum)[:12]>/bin.
func pinnedBinDir(repo string) (string, error) {
	tools := filepath.Join(repo, "test", "tools")
	mod, err := os.ReadFile(filepath.Join(tools, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("read tools pin: %w", err)
	}
	sum, err := os.ReadFile(filepath.Join(tools, "go.sum"))
	if err != nil {
		return "", fmt.Errorf("read tools pin: %w", err)
	}
	version := ""
	sc := bufio.NewScanner(bytes.NewReader(mod))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "k8s.io/kubernetes" {
			version = f[1]
			break
		}
	}
	if version == "" {
		return "", fmt.Errorf("read tools pin: %s: no k8s.io/kubernetes requirement", filepath.Join(tools, "go.mod"))
	}
	h := sha256.Sum256(append(append([]byte{}, mod...), sum...))
	return filepath.Join(CacheDir(), "k8s-"+version+"-"+hex.EncodeToString(h[:])[:12], "bin"), nil
}
