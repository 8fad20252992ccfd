// Command imagebuild writes the container images of pressure-agent and pressure-janitor as OCI
// image layout tarballs, without Docker or a registry, from the static binaries `make build`
// leaves in bin/. Each image holds one layer with the binary at /<name> as entrypoint, like the
// test images (package test/images writes both). Import one into containerd with
//
//	ctr -n k8s.io images import bin/images/pressure-agent.tar
//
// and use it with imagePullPolicy: Never (the chart: --set image.pullPolicy=Never,image.tag=<ver>).
//
// The image configuration carries the OCI labels org.opencontainers.image.version (-version, default
// the tag), .revision (-revision, when given) and .source.
//
// Usage: go run ./hack/imagebuild -bin bin -out bin/images -registry pressure.local -tag v0.1.0 [-revision COMMIT]
package main

import (
	"bytes"
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/kube-pressure/pressure/test/images"
)

// components are the images built, by binary name.
var components = []string{"pressure-agent", "pressure-janitor"}

// The OCI annotation keys the images carry as labels, and the source repository.
const (
	labelVersion  = "org.opencontainers.image.version"
	labelRevision = "org.opencontainers.image.revision"
	labelSource   = "org.opencontainers.image.source"
	source        = "https://github.com/kube-pressure/pressure"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "imagebuild: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("imagebuild", flag.ContinueOnError)
	bin := fs.String("bin", "bin", "directory holding the static linux binaries")
	out := fs.String("out", "bin/images", "directory the tarballs are written to")
	registry := fs.String("registry", "pressure.local", "registry part of the image names")
	tag := fs.String("tag", "", "image tag (required)")
	arch := fs.String("arch", runtime.GOARCH, "GOARCH the binaries were built for")
	version := fs.String("version", "", "label org.opencontainers.image.version (default: the tag)")
	revision := fs.String("revision", "", "label org.opencontainers.image.revision (default: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tag == "" {
		return fmt.Errorf("-tag is required")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	labels := map[string]string{labelVersion: *tag, labelSource: source}
	if *version != "" {
		labels[labelVersion] = *version
	}
	if *revision != "" {
		labels[labelRevision] = *revision
	}
	for _, c := range components {
		name := fmt.Sprintf("%s/%s:%s", *registry, c, *tag)
		tarball := filepath.Join(*out, c+".tar")
		digest, err := build(filepath.Join(*bin, c), name, "/"+c, *arch, tarball, labels)
		if err != nil {
			return err
		}
		// The digest is what the chart's <component>.image.digest pins.
		fmt.Printf("%s\t%s\t%s\n", name, tarball, digest)
	}
	return nil
}

// build checks that the binary is a static linux executable, then writes its image (running as
// the unprivileged images.DaemonUser, with labels) and returns its manifest digest.
func build(binPath, name, path, arch, tarball string, labels map[string]string) (string, error) {
	data, err := os.ReadFile(binPath)
	if err != nil {
		return "", fmt.Errorf("read %s (run `make build` first): %w", binPath, err)
	}
	if err := checkStatic(binPath, data); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	digest, err := images.WriteLabeledBinaryImage(&buf, name, path, data, arch, images.DaemonUser, labels)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", name, err)
	}
	tmp := tarball + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return "", err
	}
	return digest, os.Rename(tmp, tarball)
}

// checkStatic rejects binaries that would not run on an empty image: not ELF, or dynamically
// linked (an interpreter or needed libraries).
func checkStatic(path string, data []byte) error {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s is not a linux ELF binary: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (build with CGO_ENABLED=0)", path)
		}
	}
	return nil
}
