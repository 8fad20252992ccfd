// Package images builds the container images of the test cluster without Docker or a registry:
// pressure.local/pause:v1 (the sandbox image, ./pause) and pressure.local/stress:v1 (the
// workload that ramps memory, disk and process count, ./stress).
//
// Builder.BuildAll compiles each program as a static binary (CGO_ENABLED=0, -trimpath) and
// writes an OCI image layout tarball holding one layer with the binary at /pause or /stress
// (mode 0755) as entrypoint. index.json names the image in both the
// org.opencontainers.image.ref.name and io.containerd.image.name annotations, so
//
//	ctr -n k8s.io images import <tarball>
//
// on containerd 1.6 lists it under its full name, usable with imagePullPolicy: Never.
// Tarballs are deterministic: the same binary gives the same digests.
package images
