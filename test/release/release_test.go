package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kube-pressure/pressure/internal/testenv"
	"github.com/kube-pressure/pressure/test/cluster"
)

// The release the test builds: a pre-release version (a tag a maintainer could push) and a registry
// other than the chart's default, so that the packaged chart's registry is seen to be rewritten.
const (
	testVersion  = "v0.9.1-rc.2"
	testRegistry = "registry.example.com/pressure"
)

// built is one `make release` run: its output directory and the host's platform it was limited to.
type built struct {
	dir, os, arch string
}

// runRelease runs make release for testVersion into a temporary directory, limited to the host's
// linux/GOARCH (the binaries must run here to report their version).
func runRelease(t *testing.T) built {
	t.Helper()
	if runtime.GOOS != "linux" {
		testenv.SkipOrFail(t, "make release builds linux images whose binaries this test runs: host is %s", runtime.GOOS)
	}
	for _, tool := range []string{"make", "zip", "sha256sum", "tar", "gzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.SkipOrFail(t, "make release needs %s: %v", tool, err)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := cluster.RepoRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	b := built{dir: filepath.Join(t.TempDir(), "dist"), os: "linux", arch: runtime.GOARCH}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "release", "VERSION="+testVersion,
		"DIST="+b.dir, "IMAGE_REGISTRY="+testRegistry, "DIST_ARCHES="+b.arch, "CLI_PLATFORMS=linux/"+b.arch)
	cmd.Dir = root
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}
	t.Logf("make release took %s", time.Since(start).Round(time.Millisecond))
	return b
}

// artifacts are the files make release writes for one linux arch, SHA256SUMS aside.
func (b built) artifacts() []string {
	v, a := testVersion, b.arch
	return []string{
		fmt.Sprintf("kubectl-pressure_%s_linux_%s.tar.gz", v, a),
		fmt.Sprintf("pressure-%s.tgz", strings.TrimPrefix(v, "v")),
		fmt.Sprintf("pressure-agent_%s_linux_%s.oci.tar", v, a),
		fmt.Sprintf("pressure-janitor_%s_linux_%s.oci.tar", v, a),
		fmt.Sprintf("pressure_%s_linux_%s.tar.gz", v, a),
		"pressure.yaml",
	}
}

func (b built) path(name string) string { return filepath.Join(b.dir, name) }

func TestMakeReleaseWritesVersionedVerifiableArtifacts(t *testing.T) {
	b := runRelease(t)
	t.Run("every artifact and nothing else", func(t *testing.T) {
		entries, err := os.ReadDir(b.dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		want := append(b.artifacts(), "SHA256SUMS")
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s holds %q; want %q", b.dir, got, want)
		}
	})
	t.Run("SHA256SUMS lists and verifies every artifact", func(t *testing.T) {
		sums := readSums(t, b.path("SHA256SUMS"))
		for _, name := range b.artifacts() {
			want, ok := sums[name]
			if !ok {
				t.Errorf("SHA256SUMS: no line for %s", name)
				continue
			}
			if got := fileSum(t, b.path(name)); got != want {
				t.Errorf("SHA256SUMS: %s %s; the file's sha256 is %s", name, want, got)
			}
		}
	})
	t.Run("chart carries the version and the registry", func(t *testing.T) {
		tgz := b.path(fmt.Sprintf("pressure-%s.tgz", strings.TrimPrefix(testVersion, "v")))
		var chart struct {
			Version, AppVersion string
		}
		if err := yaml.Unmarshal(tarFile(t, tgz, "pressure/Chart.yaml"), &chart); err != nil {
			t.Fatalf("%s: pressure/Chart.yaml: %v", tgz, err)
		}
		if chart.Version != strings.TrimPrefix(testVersion, "v") || chart.AppVersion != testVersion {
			t.Errorf("%s: Chart.yaml version %q appVersion %q; want %q and %q", tgz, chart.Version, chart.AppVersion,
				strings.TrimPrefix(testVersion, "v"), testVersion)
		}
		var values struct {
			Image struct{ Registry, Tag string }
		}
		if err := yaml.Unmarshal(tarFile(t, tgz, "pressure/values.yaml"), &values); err != nil {
			t.Fatalf("%s: pressure/values.yaml: %v", tgz, err)
		}
		// An empty tag means the appVersion, the images' tag.
		if values.Image.Registry != testRegistry || values.Image.Tag != "" {
			t.Errorf("%s: values.yaml image.registry %q image.tag %q; want %q and \"\" (the appVersion)", tgz,
				values.Image.Registry, values.Image.Tag, testRegistry)
		}
	})
	t.Run("krew manifest is filled in and its sha256s are the archives'", func(t *testing.T) {
		checkKrew(t, b)
	})
	t.Run("images are named and labelled with the version and their binaries report it", func(t *testing.T) {
		for _, c := range []string{"pressure-agent", "pressure-janitor"} {
			img := readImage(t, b.path(fmt.Sprintf("%s_%s_linux_%s.oci.tar", c, testVersion, b.arch)), "/"+c)
			if want := testRegistry + "/" + c + ":" + testVersion; img.name != want {
				t.Errorf("%s image: name %q; want %q", c, img.name, want)
			}
			if img.arch != b.arch || img.os != "linux" {
				t.Errorf("%s image: platform %s/%s; want linux/%s", c, img.os, img.arch, b.arch)
			}
			if v := img.labels["org.opencontainers.image.version"]; v != testVersion {
				t.Errorf("%s image: label org.opencontainers.image.version %q; want %s", c, v, testVersion)
			}
			if r := img.labels["org.opencontainers.image.revision"]; len(r) != 40 {
				t.Errorf("%s image: label org.opencontainers.image.revision %q; want the commit (40 hex digits)", c, r)
			}
			checkVersion(t, c+" in its image", img.binary)
		}
	})
	t.Run("archived binaries report the version", func(t *testing.T) {
		server := b.path(fmt.Sprintf("pressure_%s_linux_%s.tar.gz", testVersion, b.arch))
		for _, c := range []string{"pressure-agent", "pressure-janitor", "kubectl-pressure"} {
			name := fmt.Sprintf("pressure_%s_linux_%s/%s", testVersion, b.arch, c)
			checkVersion(t, c+" in "+filepath.Base(server), tarFile(t, server, name))
		}
		plugin := b.path(fmt.Sprintf("kubectl-pressure_%s_linux_%s.tar.gz", testVersion, b.arch))
		checkVersion(t, "kubectl-pressure in "+filepath.Base(plugin), tarFile(t, plugin, "kubectl-pressure"))
	})
}

// checkVersion writes binary to a file, runs it with --version (kubectl-pressure: version) and wants
// testVersion in the output, not the plain build's v0.0.0-dev.
func checkVersion(t *testing.T, what string, binary []byte) {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(exe, binary, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"--version"}
	if strings.HasPrefix(what, "kubectl-pressure") {
		args = []string{"version"}
	}
	out, err := exec.Command(exe, args...).CombinedOutput()
	if err != nil {
		t.Errorf("%s %s: %v\n%s", what, args[0], err, out)
		return
	}
	if !bytes.Contains(out, []byte(" "+testVersion+" ")) && !bytes.Contains(out, []byte(testVersion+"\n")) {
		t.Errorf("%s %s printed %q; want version %s", what, args[0], strings.TrimSpace(string(out)), testVersion)
	}
}

func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// readSums reads a sha256sum file: "<hex>  <name>" per line.
func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for i, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		sum, name, ok := strings.Cut(l, "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("%s line %d: %q is not \"<sha256>  <file>\"", path, i+1, l)
		}
		sums[name] = sum
	}
	return sums
}
