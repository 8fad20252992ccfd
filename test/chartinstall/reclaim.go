package chartinstall

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ReclaimLines returns the reclaim lines of an agent log (JSON lines; other lines are skipped) as
// "target asked=NMi freed=N err=E".
func ReclaimLines(log string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		var r struct {
			Msg, Target, Err string
			Asked, Freed     int64
		}
		if json.Unmarshal([]byte(l), &r) != nil || r.Msg != "reclaim" {
			continue
		}
		out = append(out, fmt.Sprintf("%s asked=%dMi freed=%d err=%s", r.Target, r.Asked>>20, r.Freed, r.Err))
	}
	return out
}
