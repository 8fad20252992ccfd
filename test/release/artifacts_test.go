package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// tarFile returns the file name of the tar archive at p (gzip-compressed when its name ends in gz).
func tarFile(t *testing.T, p, name string) []byte {
	t.Helper()
	b, err := readTar(p, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readTar(p, name string) ([]byte, error) {
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return tarEntry(raw, strings.HasSuffix(p, "gz"), name)
}

// tarEntry returns the entry name of the tar stream raw.
func tarEntry(raw []byte, gzipped bool, name string) ([]byte, error) {
	var r io.Reader = bytes.NewReader(raw)
	if gzipped {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("gunzip: %w", err)
		}
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("no entry %s", name)
		}
		if err != nil {
			return nil, fmt.Errorf("read tar: %w", err)
		}
		if path.Clean(h.Name) == path.Clean(name) {
			return io.ReadAll(tr)
		}
	}
}

// checkKrew reads the krew manifest of b: no placeholder left, the version filled in, exactly the
// platform built, whose uri names its archive and whose sha256 is the archive's.
func checkKrew(t *testing.T, b built) {
	raw, err := os.ReadFile(b.path("pressure.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.IndexByte(raw, '@'); i >= 0 {
		line := bytes.Count(raw[:i], []byte("\n")) + 1
		t.Errorf("pressure.yaml line %d: placeholder left: %q", line, strings.Split(string(raw), "\n")[line-1])
	}
	var m struct {
		Kind string
		Spec struct {
			Version   string
			Platforms []struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				}
				URI, Sha256 string
			}
		}
	}
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatalf("pressure.yaml: %v", err)
	}
	if m.Kind != "Plugin" || m.Spec.Version != testVersion {
		t.Errorf("pressure.yaml: kind %q spec.version %q; want Plugin and %s", m.Kind, m.Spec.Version, testVersion)
	}
	if len(m.Spec.Platforms) != 1 {
		t.Fatalf("pressure.yaml: %d platforms; want the one built, linux/%s", len(m.Spec.Platforms), b.arch)
	}
	p := m.Spec.Platforms[0]
	archive := fmt.Sprintf("kubectl-pressure_%s_linux_%s.tar.gz", testVersion, b.arch)
	if p.Selector.MatchLabels["os"] != "linux" || p.Selector.MatchLabels["arch"] != b.arch {
		t.Errorf("pressure.yaml: platform %v; want linux/%s", p.Selector.MatchLabels, b.arch)
	}
	if want := "/releases/download/" + testVersion + "/" + archive; !strings.HasSuffix(p.URI, want) {
		t.Errorf("pressure.yaml: uri %s; want it to end in %s", p.URI, want)
	}
	if got := fileSum(t, b.path(archive)); p.Sha256 != got {
		t.Errorf("pressure.yaml: sha256 %s; %s has %s", p.Sha256, archive, got)
	}
}

// image is what the test reads of an OCI image layout tarball.
type image struct {
	name, os, arch string
	labels         map[string]string
	binary         []byte
}

type descriptor struct {
	Digest      string
	Annotations map[string]string
}

// readImage reads the OCI image layout tarball p (one manifest, one layer) and the file bin of its
// layer.
func readImage(t *testing.T, p, bin string) image {
	t.Helper()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	blob := func(what string, d descriptor, v any) []byte {
		t.Helper()
		b, err := tarEntry(raw, false, "blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:"))
		if err != nil {
			t.Fatalf("%s: %s %s: %v", p, what, d.Digest, err)
		}
		if v != nil {
			if err := json.Unmarshal(b, v); err != nil {
				t.Fatalf("%s: %s: %v", p, what, err)
			}
		}
		return b
	}
	idxRaw, err := tarEntry(raw, false, "index.json")
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	var idx struct{ Manifests []descriptor }
	if err := json.Unmarshal(idxRaw, &idx); err != nil || len(idx.Manifests) != 1 {
		t.Fatalf("%s: index.json: %v, %d manifests; want one", p, err, len(idx.Manifests))
	}
	var man struct {
		Config descriptor
		Layers []descriptor
	}
	blob("manifest", idx.Manifests[0], &man)
	var cfg struct {
		OS, Architecture string
		Config           struct{ Labels map[string]string }
	}
	blob("config", man.Config, &cfg)
	if len(man.Layers) != 1 {
		t.Fatalf("%s: %d layers; want one", p, len(man.Layers))
	}
	layer := blob("layer", man.Layers[0], nil)
	binary, err := tarEntry(layer, true, strings.TrimPrefix(bin, "/"))
	if err != nil {
		t.Fatalf("%s: layer: %v", p, err)
	}
	return image{name: idx.Manifests[0].Annotations["org.opencontainers.image.ref.name"], os: cfg.OS,
		arch: cfg.Architecture, labels: cfg.Config.Labels, binary: binary}
}
