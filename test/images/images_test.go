package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readTar returns the regular files of a tar stream by name.
func readTar(t *testing.T, r io.Reader) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatalf("read tar: %v", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("read tar entry %s: %v", hdr.Name, err)
		}
		files[hdr.Name] = b
	}
}

// blobOf returns the blob a descriptor points at, failing unless size and digest match.
func blobOf(t *testing.T, files map[string][]byte, d Descriptor) []byte {
	t.Helper()
	name := "blobs/sha256/" + d.Digest[len("sha256:"):]
	b, ok := files[name]
	if !ok {
		t.Fatalf("descriptor %s: no %s in tarball", d.Digest, name)
	}
	if got := digestOf(b); got != d.Digest {
		t.Errorf("blob %s has digest %s", d.Digest, got)
	}
	if int64(len(b)) != d.Size {
		t.Errorf("blob %s has size %d, descriptor says %d", d.Digest, len(b), d.Size)
	}
	return b
}

func decode(t *testing.T, what string, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %s: %v\n%s", what, err, b)
	}
}

// layerFiles checks the image's structure end to end and returns the files of its one layer
// with their tar headers.
func layerFiles(t *testing.T, img Image, entrypoint string) map[string]*tar.Header {
	t.Helper()
	f, err := os.Open(img.Tarball)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := readTar(t, f)
	if got, want := string(files["oci-layout"]), `{"imageLayoutVersion":"1.0.0"}`; got != want {
		t.Errorf("oci-layout = %q, want %q", got, want)
	}
	var idx Index
	decode(t, "index.json", files["index.json"], &idx)
	if idx.SchemaVersion != 2 || idx.MediaType != MediaTypeIndex || len(idx.Manifests) != 1 {
		t.Fatalf("index.json = %+v, want schema 2, %s, one manifest", idx, MediaTypeIndex)
	}
	top := idx.Manifests[0]
	wantAnn := map[string]string{AnnotationRefName: img.Name, AnnotationContainerdName: img.Name}
	if diff := cmp.Diff(top.Annotations, wantAnn); diff != "" {
		t.Errorf("index annotations (-got +want):\n%s", diff)
	}
	if top.MediaType != MediaTypeManifest || top.Platform == nil || top.Platform.OS != "linux" || top.Platform.Architecture != (Builder{}).arch() {
		t.Errorf("index manifest descriptor = %+v, want %s linux/%s", top, MediaTypeManifest, (Builder{}).arch())
	}
	var man Manifest
	decode(t, "manifest", blobOf(t, files, top), &man)
	if man.SchemaVersion != 2 || man.MediaType != MediaTypeManifest || man.Config.MediaType != MediaTypeConfig || len(man.Layers) != 1 || man.Layers[0].MediaType != MediaTypeLayer {
		t.Fatalf("manifest = %+v", man)
	}
	var cfg Config
	decode(t, "config", blobOf(t, files, man.Config), &cfg)
	if diff := cmp.Diff(cfg.Config.Entrypoint, []string{entrypoint}); diff != "" {
		t.Errorf("entrypoint (-got +want):\n%s", diff)
	}
	if cfg.OS != "linux" || cfg.Architecture != (Builder{}).arch() || cfg.RootFS.Type != "layers" || len(cfg.RootFS.DiffIDs) != 1 {
		t.Fatalf("config = %+v", cfg)
	}
	zr, err := gzip.NewReader(bytes.NewReader(blobOf(t, files, man.Layers[0])))
	if err != nil {
		t.Fatalf("layer is not gzip: %v", err)
	}
	layer, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip layer: %v", err)
	}
	if got := digestOf(layer); got != cfg.RootFS.DiffIDs[0] {
		t.Errorf("uncompressed layer digest %s, config diff_id %s", got, cfg.RootFS.DiffIDs[0])
	}
	referenced := []string{"blobs/sha256/" + top.Digest[7:], "blobs/sha256/" + man.Config.Digest[7:], "blobs/sha256/" + man.Layers[0].Digest[7:]}
	var stored []string
	for name := range files {
		if filepath.Dir(name) == "blobs/sha256" {
			stored = append(stored, name)
		}
	}
	sort.Strings(referenced)
	sort.Strings(stored)
	if diff := cmp.Diff(stored, referenced); diff != "" {
		t.Errorf("stored blobs differ from referenced blobs (-got +want):\n%s", diff)
	}
	headers := map[string]*tar.Header{}
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read layer tar: %v", err)
		}
		headers[hdr.Name] = hdr
	}
	return headers
}

func TestTarballIsAValidOCILayoutWithTheBinaryAsOnlyFile(t *testing.T) {
	for _, tc := range []struct{ name, entrypoint string }{
		{PauseName, "/pause"},
		{StressName, "/stress"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			headers := layerFiles(t, shared.image(t, tc.name), tc.entrypoint)
			var names []string
			for n := range headers {
				names = append(names, n)
			}
			if diff := cmp.Diff(names, []string{tc.entrypoint[1:]}); diff != "" {
				t.Fatalf("layer files (-got +want):\n%s", diff)
			}
			if hdr := headers[tc.entrypoint[1:]]; hdr.Mode != 0o755 || hdr.Uid != 0 || hdr.Gid != 0 || hdr.Typeflag != tar.TypeReg {
				t.Errorf("layer %s: mode %o uid %d gid %d type %c, want 0755 0 0 regular", hdr.Name, hdr.Mode, hdr.Uid, hdr.Gid, hdr.Typeflag)
			}
		})
	}
}

func TestBinaryInImageIsStatic(t *testing.T) {
	for _, tc := range []struct{ name, entrypoint string }{{PauseName, "/pause"}, {StressName, "/stress"}} {
		t.Run(tc.name, func(t *testing.T) {
			bin := extractBinary(t, shared.image(t, tc.name), tc.entrypoint)
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatalf("binary %s is not ELF: %v", tc.entrypoint, err)
			}
			defer f.Close()
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
					t.Errorf("binary %s has program header %v: not static", tc.entrypoint, p.Type)
				}
			}
		})
	}
}

func TestRebuildWithUnchangedSourcesKeepsTarballAndDigests(t *testing.T) {
	before := map[string]os.FileInfo{}
	sums := map[string]string{}
	for _, img := range shared.get(t) {
		fi, err := os.Stat(img.Tarball)
		if err != nil {
			t.Fatal(err)
		}
		before[img.Name] = fi
		sums[img.Name] = fileSum(t, img.Tarball)
	}
	again, err := BuildAll(t.Context(), shared.dir)
	if err != nil {
		t.Fatalf("second BuildAll: %v", err)
	}
	fresh, err := BuildAll(t.Context(), t.TempDir())
	if err != nil {
		t.Fatalf("BuildAll into a fresh dir: %v", err)
	}
	for i, img := range again {
		fi, err := os.Stat(img.Tarball)
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(fi, before[img.Name]) || !fi.ModTime().Equal(before[img.Name].ModTime()) {
			t.Errorf("%s: tarball rewritten although nothing changed", img.Name)
		}
		if got, want := fileSum(t, fresh[i].Tarball), sums[img.Name]; got != want {
			t.Errorf("%s: fresh build has sha256 %s, first build %s: not deterministic", img.Name, got, want)
		}
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

// extractBinary writes the image's binary to a temp dir and returns its path.
func extractBinary(t *testing.T, img Image, entrypoint string) string {
	t.Helper()
	f, err := os.Open(img.Tarball)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := readTar(t, f)
	var idx Index
	decode(t, "index.json", files["index.json"], &idx)
	var man Manifest
	decode(t, "manifest", blobOf(t, files, idx.Manifests[0]), &man)
	zr, err := gzip.NewReader(bytes.NewReader(blobOf(t, files, man.Layers[0])))
	if err != nil {
		t.Fatal(err)
	}
	layer := readTar(t, zr)
	bin := filepath.Join(t.TempDir(), filepath.Base(entrypoint))
	if err := os.WriteFile(bin, layer[entrypoint[1:]], 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}
