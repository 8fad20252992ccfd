// Command testtable reads `go test -json` on stdin, prints what plain `go test` would (the ok, FAIL and
// "no test files" line of each package, the output of failing tests, build errors), and ends with a
// table of each package's wall time, longest first. It never changes the outcome: make pipes go test
// into it under pipefail, so the exit status stays go test's (testtable exits 0 unless stdin fails).
//
//	go test -json ./... | testtable
package main
