package differential

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/build"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/testenv"
)

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

// oracleKey hashes what one release's oracle is built from, in path order: its module's go.mod and
// go.sum, the release and build tags, and the oracle's source files that the build includes (those
// matching the release's build tags, read through the per-release modules' symlinks). So an adapter
// file of another release (compat_*_k1XX.go) does not change this release's key.
func oracleKey(tools string, rel release) (string, error) {
	mod := filepath.Join(tools, rel.Module)
	pkg := filepath.Join(mod, rel.Pkg)
	ctx := build.Default
	ctx.BuildTags = rel.tags()
	ctx.CgoEnabled = false
	entries, err := os.ReadDir(pkg)
	if err != nil {
		return "", fmt.Errorf("hash oracle source %s: %w", rel.Version, err)
	}
	files := []string{"go.mod", "go.sum"}
	var srcs []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		ok, err := ctx.MatchFile(pkg, e.Name())
		if err != nil {
			return "", fmt.Errorf("hash oracle source %s: %w", rel.Version, err)
		}
		if ok {
			srcs = append(srcs, filepath.Join(rel.Pkg, e.Name()))
		}
	}
	sort.Strings(srcs)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", rel.Version, strings.Join(rel.tags(), ","))
	for _, f := range append(files, srcs...) {
		data, err := os.ReadFile(filepath.Join(mod, f))
		if err != nil {
			return "", fmt.Errorf("hash oracle source %s: %w", rel.Version, err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.Base(f), len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// oraclePath is where the release's oracle is cached, and whether it is built there.
func oraclePath(t *testing.T, rel release) (string, bool) {
	t.Helper()
	key, err := oracleKey(filepath.Join(repoRoot(t), "test", "tools"), rel)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(cacheDir(), "oracle", "kubelet-eviction-oracle-"+rel.Version+"-"+key)
	fi, err := os.Stat(bin)
	return bin, err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// oracleBinary returns the cached oracle of one release, building it when needed (one build at a
// time: the test asks for the releases in order). Without CI=true a failed build skips the release's
// test with the reason (no module cache, no network); under CI it fails.
func oracleBinary(t *testing.T, rel release) string {
	t.Helper()
	tools := filepath.Join(repoRoot(t), "test", "tools")
	bin, built := oraclePath(t, rel)
	if built {
		return bin
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatalf("oracle cache: %v", err)
	}
	tmp := fmt.Sprintf("%s.tmp%d", bin, os.Getpid())
	mod := filepath.Join(tools, rel.Module)
	// Progress goes to stderr at once (t.Logf shows only at the end): a cold build takes minutes.
	fmt.Fprintf(os.Stderr, "differential: building the kubelet %s eviction oracle into %s (links kubelet packages; "+
		"over 10 min with a cold Go build cache)\n", rel.Version, bin)
	began := time.Now()
	// The same flags as hack/build-k8s.sh (CGO_ENABLED=0, -trimpath), so the pinned release's oracle
	// links the kubelet packages that building the test cluster's binaries left in the Go build cache.
	args := []string{"build", "-mod=readonly", "-trimpath", "-o", tmp}
	if tags := rel.tags(); len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.Command("go", append(args, rel.Pkg)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Dir = mod
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		_ = os.Remove(tmp)
		msg := fmt.Sprintf("cannot build the kubelet %s eviction oracle (go build in %s: %v):\n%s", rel.Version, mod, err,
			tail(out.String(), 2000))
		testenv.SkipOrFail(t, "skipping the differential test of %s: %s", rel.Version, msg)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatalf("oracle cache: %v", err)
	}
	fmt.Fprintf(os.Stderr, "differential: built the kubelet %s eviction oracle in %s\n", rel.Version,
		time.Since(began).Round(time.Second))
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

// runOracleParallel splits the cases among workers oracle processes of bin.
func runOracleParallel(t *testing.T, bin string, cases []Case, workers int) []Result {
	t.Helper()
	out := make([]Result, len(cases))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	chunk := (len(cases) + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(cases))
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs, err := runOracle(bin, cases[lo:hi])
			copy(out[lo:hi], rs)
			errs[w] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestOracleKeyCoversTheFilesOfItsReleaseOnly(t *testing.T) {
	tools := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(tools, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tools, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("m/go.mod", "module m\n")
	write("m/go.sum", "")
	write("m/main.go", "package main\n")
	write("m/compat_k136.go", "//go:build oracle_k136\n\npackage main\n")
	write("m/main_test.go", "package main\n")
	plain := release{Version: "v1.37.2", Module: "m", Pkg: "."}
	k136 := release{Version: "v1.36.3", Module: "m", Pkg: ".", Tag: "oracle_k136"}
	key := func(r release) string {
		t.Helper()
		k, err := oracleKey(tools, r)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	p0, t0 := key(plain), key(k136)
	if p0 == t0 {
		t.Errorf("two releases of one module share the key %s", p0)
	}
	write("m/compat_k136.go", "//go:build oracle_k136\n\npackage main // changed\n")
	write("m/main_test.go", "package main // changed\n")
	if p1, t1 := key(plain), key(k136); p1 != p0 || t1 == t0 {
		t.Errorf("after a change of the 1.36 adapter: plain key %s -> %s (want the same), 1.36 key %s -> %s (want another)",
			p0, p1, t0, t1)
	}
	prev := p0
	for _, f := range []string{"m/main.go", "m/go.sum", "m/go.mod"} {
		write(f, "// changed "+f+"\n")
		if k := key(plain); k == prev {
			t.Errorf("a change of %s kept the key %s", f, prev)
		} else {
			prev = k
		}
	}
}
