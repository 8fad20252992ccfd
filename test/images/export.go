package images

import "io"

// WriteSingleBinaryImage writes an OCI image layout tarball to w holding one layer with binary at
// path (mode 0755, also the entrypoint), named name (both annotations, as for the test images),
// for linux/arch. It is the writer BuildAll uses, for other single-binary images such as
// pressure-agent and pressure-janitor (hack/imagebuild). Same input, same bytes.
func WriteSingleBinaryImage(w io.Writer, name, path string, binary []byte, arch string) error {
	return writeLayout(w, imageSpec{Name: name, Path: path, Binary: binary, Arch: arch})
}
