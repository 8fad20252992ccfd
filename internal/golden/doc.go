// Package golden is the repository's one way to check output against files kept in testdata: golden
// files (Check) and scenario scripts (RunScripts), both rewritten from the actual output with the one
// flag -rewrite:
//
//	go test ./internal/decision ./internal/policy ./internal/cli -rewrite
//
// Only commit rewritten files whose changes you understand. The package is a test helper: it imports
// testing and is imported only by _test.go files.
package golden
