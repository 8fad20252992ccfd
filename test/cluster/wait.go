package cluster

import (
	"fmt"
	"os"
	"time"
)

// WaitPrefix starts the lines that say what a test binary waited for and how long: hack/testtable sums
// them by package into make test's table ("waited for" column). The format is
// "pressure-wait: WHAT: DURATION", with WHAT free of colons and DURATION as time.Duration prints it.
const WaitPrefix = "pressure-wait: "

// WaitLine is the line that reports a wait of d for what.
func WaitLine(what string, d time.Duration) string {
	return fmt.Sprintf("%s%s: %s", WaitPrefix, what, d.Round(100*time.Millisecond))
}

// reportWait prints WaitLine to the test binary's stderr (go test -json carries it as output).
func reportWait(what string, d time.Duration) {
	fmt.Fprintln(os.Stderr, WaitLine(what, d))
}
