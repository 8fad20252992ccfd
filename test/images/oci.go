package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"time"
)

// Media types and annotation keys of the OCI image layout written here.
const (
	MediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	MediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	MediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"

	// AnnotationRefName is the OCI reference name; set to the full image name.
	AnnotationRefName = "org.opencontainers.image.ref.name"
	// AnnotationContainerdName is what containerd's importer names the image after.
	AnnotationContainerdName = "io.containerd.image.name"
)

// epoch is the fixed timestamp of every file and history entry: same binary, same digests.
func epoch() time.Time { return time.Unix(0, 0).UTC() }

// Descriptor is an OCI content descriptor.
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *Platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Platform is the OCI platform of a manifest.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// Index is index.json of an OCI image layout.
type Index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []Descriptor `json:"manifests"`
}

// Manifest is an OCI image manifest.
type Manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

// Config is the subset of the OCI image configuration written here.
type Config struct {
	Created      string        `json:"created"`
	Architecture string        `json:"architecture"`
	OS           string        `json:"os"`
	Config       RunConfig     `json:"config"`
	RootFS       RootFS        `json:"rootfs"`
	History      []HistoryItem `json:"history"`
}

// RunConfig is the execution part of an image configuration.
type RunConfig struct {
	Entrypoint []string `json:"Entrypoint"`
	Env        []string `json:"Env"`
	WorkingDir string   `json:"WorkingDir"`
	// User is the default user ("uid:gid"); empty means root.
	User string `json:"User,omitempty"`
	// Labels are the image's labels (org.opencontainers.image.version, ...); none for the test images.
	Labels map[string]string `json:"Labels,omitempty"`
}

// RootFS lists the uncompressed layer digests.
type RootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

// HistoryItem is one image history entry.
type HistoryItem struct {
	Created   string `json:"created"`
	CreatedBy string `json:"created_by"`
}

// imageSpec is one single-binary image: Binary is stored at Path with mode 0755.
type imageSpec struct {
	Name   string // full reference, e.g. pressure.local/stress:v1
	Path   string // absolute path inside the image, also the entrypoint
	Binary []byte
	Arch   string // GOARCH
	User   string // "uid:gid" the image runs as; "" means root
	Labels map[string]string
}

// blob is one file under blobs/sha256.
type blob struct {
	desc Descriptor
	data []byte
}

func newBlob(mediaType string, data []byte) blob {
	return blob{desc: Descriptor{MediaType: mediaType, Digest: digestOf(data), Size: int64(len(data))}, data: data}
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// writeLayout writes s as an OCI image layout tar stream to w.
func writeLayout(w io.Writer, s imageSpec) error {
	_, err := writeLayoutDigest(w, s)
	return err
}

// writeLayoutDigest is writeLayout that also returns the image's manifest digest (what a pinned
// reference name@sha256:... names).
func writeLayoutDigest(w io.Writer, s imageSpec) (string, error) {
	layerTar, err := layerTar(s.Path, s.Binary)
	if err != nil {
		return "", err
	}
	layerGz, err := gzipBytes(layerTar)
	if err != nil {
		return "", err
	}
	layer := newBlob(MediaTypeLayer, layerGz)
	created := epoch().Format(time.RFC3339)
	cfg, err := json.Marshal(Config{
		Created: created, Architecture: s.Arch, OS: "linux",
		Config: RunConfig{
			Entrypoint: []string{s.Path},
			Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			WorkingDir: "/",
			User:       s.User,
			Labels:     s.Labels,
		},
		RootFS:  RootFS{Type: "layers", DiffIDs: []string{digestOf(layerTar)}},
		History: []HistoryItem{{Created: created, CreatedBy: "github.com/kube-pressure/pressure/test/images"}},
	})
	if err != nil {
		return "", fmt.Errorf("encode config of %s: %w", s.Name, err)
	}
	config := newBlob(MediaTypeConfig, cfg)
	man, err := json.Marshal(Manifest{SchemaVersion: 2, MediaType: MediaTypeManifest, Config: config.desc, Layers: []Descriptor{layer.desc}})
	if err != nil {
		return "", fmt.Errorf("encode manifest of %s: %w", s.Name, err)
	}
	manifest := newBlob(MediaTypeManifest, man)
	top := manifest.desc
	top.Platform = &Platform{Architecture: s.Arch, OS: "linux"}
	top.Annotations = map[string]string{AnnotationRefName: s.Name, AnnotationContainerdName: s.Name}
	idx, err := json.Marshal(Index{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: []Descriptor{top}})
	if err != nil {
		return "", fmt.Errorf("encode index of %s: %w", s.Name, err)
	}
	return manifest.desc.Digest, writeTar(w, []tarFile{
		{name: "oci-layout", data: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{name: "index.json", data: idx},
		{name: "blobs/", dir: true},
		{name: "blobs/sha256/", dir: true},
		blobFile(config), blobFile(manifest), blobFile(layer),
	})
}

// layerTar is the uncompressed layer: the binary alone, root-owned, mode 0755.
func layerTar(absPath string, binary []byte) ([]byte, error) {
	var buf bytes.Buffer
	name := path.Clean(absPath)[1:]
	if err := writeTar(&buf, []tarFile{{name: name, data: binary, mode: 0o755}}); err != nil {
		return nil, fmt.Errorf("write layer with %s: %w", absPath, err)
	}
	return buf.Bytes(), nil
}

func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, fmt.Errorf("gzip layer: %w", err)
	}
	if _, err := zw.Write(b); err != nil {
		return nil, fmt.Errorf("gzip layer: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("gzip layer: %w", err)
	}
	return buf.Bytes(), nil
}

type tarFile struct {
	name string
	data []byte
	mode int64 // 0 means 0644 for files, 0755 for directories
	dir  bool
}

func blobFile(b blob) tarFile {
	return tarFile{name: "blobs/sha256/" + b.desc.Digest[len("sha256:"):], data: b.data}
}

func writeTar(w io.Writer, files []tarFile) error {
	tw := tar.NewWriter(w)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, ModTime: epoch(), Typeflag: tar.TypeReg, Size: int64(len(f.data))}
		if f.dir {
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		}
		if hdr.Mode == 0 {
			hdr.Mode = map[bool]int64{false: 0o644, true: 0o755}[f.dir]
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("tar header %s: %w", f.name, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return fmt.Errorf("tar write %s: %w", f.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("tar close: %w", err)
	}
	return nil
}
