package chartinstall

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kube-pressure/pressure/test/images"
)

// Registry is the registry part of the images DaemonImages writes, the chart's default
// image.registry.
const Registry = "pressure.local"

// Components the chart deploys, one image each.
const (
	AgentComponent   = "pressure-agent"
	JanitorComponent = "pressure-janitor"
)

// DaemonImages builds each component (./cmd/<component>, static) in the module at root and writes
// its image, Registry/<component>:<tag> with the unprivileged images.DaemonUser, as hack/imagebuild
// does. Binaries and tarballs go to dir.
func DaemonImages(ctx context.Context, root, dir, tag string, components ...string) ([]images.Image, error) {
	arch, err := goarch(ctx)
	if err != nil {
		return nil, err
	}
	var out []images.Image
	for _, c := range components {
		img, err := daemonImage(ctx, root, dir, tag, arch, c)
		if err != nil {
			return nil, err
		}
		out = append(out, img)
	}
	return out, nil
}

func daemonImage(ctx context.Context, root, dir, tag, arch, component string) (images.Image, error) {
	bin := filepath.Join(dir, component)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/"+component)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return images.Image{}, fmt.Errorf("go build %s: %s: %w", component, strings.TrimSpace(string(b)), err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return images.Image{}, fmt.Errorf("read built binary: %w", err)
	}
	var buf bytes.Buffer
	name := Registry + "/" + component + ":" + tag
	if _, err := images.WriteSingleBinaryImage(&buf, name, "/"+component, data, arch, images.DaemonUser); err != nil {
		return images.Image{}, fmt.Errorf("image %s: %w", name, err)
	}
	tarball := filepath.Join(dir, component+".tar")
	if err := os.WriteFile(tarball, buf.Bytes(), 0o644); err != nil {
		return images.Image{}, fmt.Errorf("write image %s: %w", name, err)
	}
	return images.Image{Name: name, Tarball: tarball}, nil
}

// goarch is the GOARCH the go command builds for here.
func goarch(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOARCH").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOARCH: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}
