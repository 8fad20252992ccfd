package images

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Image names, as containerd lists them after `ctr -n k8s.io images import`.
const (
	PauseName  = "pressure.local/pause:v1"
	StressName = "pressure.local/stress:v1"
)

// modulePath is the module whose root RepoRoot finds.
const modulePath = "github.com/kube-pressure/pressure"

// formatVersion changes whenever writeLayout changes its output for the same binary; it is
// part of the cache stamp.
const formatVersion = "1"

// Image is one built image tarball.
type Image struct {
	Name    string // full reference, e.g. pressure.local/stress:v1
	Tarball string // absolute path of the OCI image layout tarball
}

// program is one image's source: package dir (relative to the repo root), image name and the
// binary's path inside the image.
type program struct {
	pkg, name, path string
}

func programs() []program {
	return []program{
		{pkg: "./test/images/pause", name: PauseName, path: "/pause"},
		{pkg: "./test/images/stress", name: StressName, path: "/stress"},
	}
}

// Builder builds the test images. The zero value of each optional field has a default.
type Builder struct {
	RepoRoot string // module root holding go.mod; required
	GoBin    string // go command; "" means "go" from PATH
	Arch     string // GOARCH of binaries and images; "" means runtime.GOARCH
}

// BuildAll builds the images with a Builder rooted at this source file's module.
func BuildAll(ctx context.Context, outDir string) ([]Image, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	return Builder{RepoRoot: root}.BuildAll(ctx, outDir)
}

// RepoRoot finds the module root from this source file's location (two directories up).
func RepoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", fmt.Errorf("locate module root: source path %q is not absolute (built with -trimpath?); set Builder.RepoRoot", file)
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("locate module root: %w", err)
	}
	if !bytes.Contains(mod, []byte("module "+modulePath+"\n")) {
		return "", fmt.Errorf("locate module root: %s/go.mod is not module %s", root, modulePath)
	}
	return root, nil
}

// BuildAll builds the pause and stress binaries (CGO_ENABLED=0, -trimpath, GOOS=linux) and
// writes one OCI image layout tarball per image into outDir, named <program>.tar. A tarball
// is rewritten only when its binary, architecture or the layout format changed (recorded in
// <program>.tar.stamp); the go build itself always runs and relies on Go's build cache.
func (b Builder) BuildAll(ctx context.Context, outDir string) ([]Image, error) {
	if b.RepoRoot == "" {
		return nil, errors.New("build images: Builder.RepoRoot is empty")
	}
	outDir, err := filepath.Abs(outDir)
	if err != nil {
		return nil, fmt.Errorf("build images: %w", err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("build images: %w", err)
	}
	binDir, err := os.MkdirTemp(outDir, ".bin-")
	if err != nil {
		return nil, fmt.Errorf("build images: %w", err)
	}
	defer os.RemoveAll(binDir)
	var out []Image
	for _, p := range programs() {
		img, err := b.build(ctx, p, binDir, outDir)
		if err != nil {
			return nil, err
		}
		out = append(out, img)
	}
	return out, nil
}

func (b Builder) goBin() string {
	if b.GoBin == "" {
		return "go"
	}
	return b.GoBin
}

func (b Builder) arch() string {
	if b.Arch == "" {
		return runtime.GOARCH
	}
	return b.Arch
}

// build compiles one program and writes its tarball unless the stamp says it is current.
func (b Builder) build(ctx context.Context, p program, binDir, outDir string) (Image, error) {
	short := filepath.Base(p.pkg)
	bin := filepath.Join(binDir, short)
	cmd := exec.CommandContext(ctx, b.goBin(), "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", bin, p.pkg)
	cmd.Dir = b.RepoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+b.arch())
	if out, err := cmd.CombinedOutput(); err != nil {
		return Image{}, fmt.Errorf("go build %s in %s: %w: %s", p.pkg, b.RepoRoot, err, strings.TrimSpace(string(out)))
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		return Image{}, fmt.Errorf("read built %s: %w", bin, err)
	}
	img := Image{Name: p.name, Tarball: filepath.Join(outDir, short+".tar")}
	sum := sha256.Sum256(binary)
	stamp := fmt.Sprintf("format=%s name=%s arch=%s binary=sha256:%s\n", formatVersion, p.name, b.arch(), hex.EncodeToString(sum[:]))
	if current(img.Tarball, stamp) {
		return img, nil
	}
	spec := imageSpec{Name: p.name, Path: p.path, Binary: binary, Arch: b.arch()}
	if err := writeFileAtomic(img.Tarball, func(f *os.File) error { return writeLayout(f, spec) }); err != nil {
		return Image{}, err
	}
	if err := writeFileAtomic(img.Tarball+".stamp", func(f *os.File) error {
		_, err := f.WriteString(stamp)
		return err
	}); err != nil {
		return Image{}, err
	}
	return img, nil
}

// current reports whether tarball exists and its stamp file equals stamp.
func current(tarball, stamp string) bool {
	got, err := os.ReadFile(tarball + ".stamp")
	if err != nil || string(got) != stamp {
		return false
	}
	_, err = os.Stat(tarball)
	return err == nil
}

// writeFileAtomic writes path through a temporary file in the same directory and a rename.
func writeFileAtomic(path string, write func(*os.File) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
