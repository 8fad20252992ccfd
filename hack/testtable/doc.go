// Command testtable reads `go test -json`, on stdin or from each file named, and prints what plain
// `go test` would: the ok, FAIL and "no test files" line of each package, the output of failing tests,
// build errors. It ends with a table of each package's wall time, longest first, with when it started in
// the run and what it waited for, and the run's own wall time.
//
// make test runs the -race tier and the rest side by side, each into its own FIFO; testtable merges
// their lines as they come (the two streams' packages are disjoint). It never changes the outcome: make
// keeps go test's exit status (testtable exits non-zero only when it cannot read its input).
//
//	go test -json ./... | testtable
//	testtable race.fifo rest.fifo
package main
