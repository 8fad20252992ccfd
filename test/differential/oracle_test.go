package differential

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/internal/testenv"
)

const oracleCmd = "cmd/kubelet-eviction-oracle"

// repoRoot walks up from the working directory to the go.mod of the pressure module.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("getwd: %v", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module github.com/kube-pressure/pressure\n")) {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod of github.com/kube-pressure/pressure above %s", dir)
		}
	}
}

func cacheDir() string {
	if d := os.Getenv("PRESSURE_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		home = "/root"
	}
	return filepath.Join(home, ".cache", "pressure")
}

// oracleKey hashes test/tools/go.mod, go.sum and every file of the oracle's source, in path order.
func oracleKey(tools string) (string, error) {
	h := sha256.New()
	files := []string{"go.mod", "go.sum"}
	err := filepath.WalkDir(filepath.Join(tools, oracleCmd), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, err := filepath.Rel(tools, p)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash oracle source: %w", err)
	}
	sort.Strings(files[2:])
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(tools, f))
		if err != nil {
			return "", fmt.Errorf("hash oracle source: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// oracleBinary returns the cached oracle, building it when needed. Without CI=true a failed build
// skips the test with the reason (no module cache, no network); under CI it fails.
func oracleBinary(t *testing.T) string {
	t.Helper()
	tools := filepath.Join(repoRoot(t), "test", "tools")
	key, err := oracleKey(tools)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(cacheDir(), "oracle", "kubelet-eviction-oracle-"+key)
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return bin
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatalf("oracle cache: %v", err)
	}
	tmp := fmt.Sprintf("%s.tmp%d", bin, os.Getpid())
	t.Logf("building the kubelet eviction oracle into %s (links kubelet packages; takes a while)", bin)
	// The same flags as hack/build-k8s.sh (CGO_ENABLED=0, -trimpath), so the kubelet packages it
	// links come from the Go build cache that building the test cluster's binaries filled.
	cmd := exec.Command("go", "build", "-mod=readonly", "-trimpath", "-o", tmp, "./"+oracleCmd)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Dir = tools
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		_ = os.Remove(tmp)
		msg := fmt.Sprintf("cannot build the kubelet eviction oracle (go build in %s: %v):\n%s", tools, err, tail(out.String(), 2000))
		testenv.SkipOrFail(t, "skipping the differential test: %s", msg)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatalf("oracle cache: %v", err)
	}
	return bin
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// runOracle feeds the cases to one oracle process and returns one result per case. It runs on a
// worker goroutine, so it returns errors instead of failing the test.
func runOracle(bin string, cases []Case) ([]Result, error) {
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for i := range cases {
		if err := enc.Encode(&cases[i]); err != nil {
			return nil, fmt.Errorf("encode case %s: %w", cases[i].Name, err)
		}
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("oracle: %w\n%s", err, tail(stderr.String(), 4000))
	}
	dec := json.NewDecoder(&stdout)
	var out []Result
	for {
		var r Result
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode oracle result %d: %w", len(out), err)
		}
		out = append(out, r)
	}
	if len(out) != len(cases) {
		return nil, fmt.Errorf("oracle returned %d results for %d cases; stderr:\n%s", len(out), len(cases),
			tail(strings.TrimSpace(stderr.String()), 4000))
	}
	return out, nil
}
