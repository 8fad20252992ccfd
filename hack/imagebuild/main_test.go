package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/internal/testenv"
)

// staticBinary builds the test cluster's pause program as a static binary (seconds, cached).
func staticBinary(t *testing.T) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "pause")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "../../test/images/pause")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readTar returns every regular file of a tar stream by name.
func readTar(t *testing.T, r io.Reader) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = b
		}
	}
}

func TestImagesNameTheComponentAndHoldItsBinaryAsEntrypoint(t *testing.T) {
	bin := t.TempDir()
	binary := staticBinary(t)
	for _, c := range components {
		if err := os.WriteFile(filepath.Join(bin, c), binary, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	if err := run([]string{"-bin", bin, "-out", out, "-tag", "v1.2.3"}); err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, c := range components {
		f, err := os.Open(filepath.Join(out, c+".tar"))
		if err != nil {
			t.Fatal(err)
		}
		files := readTar(t, f)
		f.Close()
		var idx struct {
			Manifests []struct {
				Digest      string            `json:"digest"`
				Annotations map[string]string `json:"annotations"`
			} `json:"manifests"`
		}
		if err := json.Unmarshal(files["index.json"], &idx); err != nil || len(idx.Manifests) != 1 {
			t.Fatalf("%s index.json: %v %s", c, err, files["index.json"])
		}
		want := "pressure.local/" + c + ":v1.2.3"
		if got := idx.Manifests[0].Annotations["io.containerd.image.name"]; got != want {
			t.Errorf("%s: image name %q, want %q", c, got, want)
		}
		var man struct {
			Config struct{ Digest string }   `json:"config"`
			Layers []struct{ Digest string } `json:"layers"`
		}
		if err := json.Unmarshal(files["blobs/sha256/"+strings.TrimPrefix(idx.Manifests[0].Digest, "sha256:")], &man); err != nil || len(man.Layers) != 1 {
			t.Fatalf("%s manifest: %v", c, err)
		}
		var cfg struct {
			Architecture string `json:"architecture"`
			Config       struct {
				Entrypoint []string
				User       string
				Labels     map[string]string
			} `json:"config"`
		}
		if err := json.Unmarshal(files["blobs/sha256/"+strings.TrimPrefix(man.Config.Digest, "sha256:")], &cfg); err != nil {
			t.Fatal(err)
		}
		if len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/"+c || cfg.Architecture != runtime.GOARCH {
			t.Errorf("%s: entrypoint %v arch %s, want [/%s] %s", c, cfg.Config.Entrypoint, cfg.Architecture, c, runtime.GOARCH)
		}
		if v := cfg.Config.Labels["org.opencontainers.image.version"]; v != "v1.2.3" {
			t.Errorf("%s: label org.opencontainers.image.version %q, want the tag v1.2.3", c, v)
		}
		// The chart runs the janitor (and the agent without the kill rung) as the image's user.
		if cfg.Config.User != "65532:65532" {
			t.Errorf("%s: image user %q, want the unprivileged 65532:65532", c, cfg.Config.User)
		}
		gz, err := gzip.NewReader(strings.NewReader(string(files["blobs/sha256/"+strings.TrimPrefix(man.Layers[0].Digest, "sha256:")])))
		if err != nil {
			t.Fatal(err)
		}
		layer := readTar(t, gz)
		if got := layer[c]; string(got) != string(binary) {
			t.Errorf("%s: layer holds %d bytes at %s (files %d), want the %d-byte binary", c, len(got), c, len(layer), len(binary))
		}
	}
}

func TestDynamicallyLinkedOrMissingBinariesAreRefused(t *testing.T) {
	bin := t.TempDir()
	if err := run([]string{"-bin", bin, "-out", t.TempDir(), "-tag", "v1"}); err == nil || !strings.Contains(err.Error(), "make build") {
		t.Errorf("missing binaries: got %v, want an error naming make build", err)
	}
	sh, err := os.ReadFile("/bin/sh")
	if err != nil {
		testenv.SkipOrFail(t, "no /bin/sh to use as a dynamically linked binary: %v", err)
	}
	if err := checkStatic("/bin/sh", sh); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("/bin/sh: got %v, want dynamically linked", err)
	}
	if err := checkStatic("script", []byte("#!/bin/sh\n")); err == nil || !strings.Contains(err.Error(), "not a linux ELF") {
		t.Errorf("script: got %v, want not ELF", err)
	}
	if err := run([]string{"-bin", bin, "-out", t.TempDir()}); err == nil || !strings.Contains(err.Error(), "-tag") {
		t.Errorf("no tag: got %v, want -tag is required", err)
	}
}
