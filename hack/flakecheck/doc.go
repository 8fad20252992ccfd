// Package flakecheck tests make flake-check (hack/flake-check.sh through the Makefile) on a sample
// package under testdata: the pattern reaches go test as typed, a run counts its passes, and a run that
// ran no test is not a pass.
package flakecheck
