// Package version holds the build identity of the pressure binaries. Version and Commit are set at link
// time with -ldflags "-X github.com/kube-pressure/pressure/internal/version.Version=..." by the Makefile.
package version
