// Package release tests `make release` (docs/release.md): it runs the target into a temporary
// directory and checks what a maintainer would upload, the way a user would consume it. Every artifact
// is there; SHA256SUMS matches every file; the packaged chart's Chart.yaml carries the version (chart
// version without the leading v, appVersion with it) and its values.yaml the release's image registry;
// the krew manifest has no placeholder left and its sha256s are the archives'; each OCI image tarball
// is named <registry>/<component>:<version>, labelled org.opencontainers.image.version and .revision,
// and its binary, run, reports the version, as do the binaries of the archives.
//
// Cross-compiling every platform takes minutes on two cores, so the test runs the target with one
// platform (CLI_PLATFORMS=linux/<host arch>, DIST_ARCHES=<host arch>): the same recipe, fewer loop
// iterations; the krew manifest then lists only that platform. The package has only tests.
package release
