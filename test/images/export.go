package images

import "io"

// DaemonUser is the unprivileged user ("uid:gid") the pressure-agent and pressure-janitor images
// run as by default, as distroless's nonroot (the Dockerfile's USER).
const DaemonUser = "65532:65532"

// WriteSingleBinaryImage writes an OCI image layout tarball to w holding one layer with binary at
// path (mode 0755, also the entrypoint), named name (both annotations, as for the test images),
// for linux/arch, running as user ("uid:gid"; "" is root). It is the writer BuildAll uses, for
// other single-binary images such as pressure-agent and pressure-janitor (hack/imagebuild). Same
// input, same bytes. It returns the image's manifest digest (sha256:...), for a pinned reference.
func WriteSingleBinaryImage(w io.Writer, name, path string, binary []byte, arch, user string) (string, error) {
	return writeLayoutDigest(w, imageSpec{Name: name, Path: path, Binary: binary, Arch: arch, User: user})
}

// WriteLabeledBinaryImage is WriteSingleBinaryImage with labels in the image configuration (such as
// org.opencontainers.image.version): what hack/imagebuild writes for the released images. Without
// labels the bytes are those of WriteSingleBinaryImage.
func WriteLabeledBinaryImage(w io.Writer, name, path string, binary []byte, arch, user string, labels map[string]string) (string, error) {
	return writeLayoutDigest(w, imageSpec{Name: name, Path: path, Binary: binary, Arch: arch, User: user, Labels: labels})
}
