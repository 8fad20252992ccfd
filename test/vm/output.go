package vm

import (
	"fmt"
	"strings"
)

// The guest init's markers on ttyS1 (guestinit/main.go; keep in sync).
const (
	markBegin = "=== pressure-vm begin "
	markEnd   = "=== pressure-vm end "
	markDone  = "=== pressure-vm done"
	markError = "=== pressure-vm error "
	// Background programs (services) report their start and end.
	markStarted = "=== pressure-vm started "
	markExited  = "=== pressure-vm exited "
)

// parseOutput splits the output port into one Result per program. It fails when the guest init reported
// an error or the output ends before the done marker; the results parsed so far are returned with it.
func parseOutput(s string) ([]Result, error) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var res []Result
	var cur *Result
	var body strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		t := strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(t, markError):
			return res, fmt.Errorf("guest init: %s", strings.TrimPrefix(t, markError))
		case strings.HasPrefix(t, markBegin):
			res = append(res, Result{Name: strings.TrimPrefix(t, markBegin), Exit: -1})
			cur = &res[len(res)-1]
			body.Reset()
		case strings.HasPrefix(t, markEnd) && cur != nil:
			var name string
			if _, err := fmt.Sscanf(strings.TrimPrefix(t, markEnd), "%s exit %d after %s", &name, &cur.Exit, &cur.Elapsed); err != nil {
				return res, fmt.Errorf("end marker %q: %w", t, err)
			}
			cur.Output, cur = body.String(), nil
		case t == markDone:
			return res, nil
		case cur != nil:
			body.WriteString(line)
		}
	}
	if cur != nil {
		cur.Output = body.String()
		return res, fmt.Errorf("output ends inside %s (guest crashed or ran out of time)", cur.Name)
	}
	return res, fmt.Errorf("output ends without %q (guest stopped early)", markDone)
}
