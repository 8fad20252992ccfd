package main

import (
	"github.com/kube-pressure/pressure/test/evictaudit"
)

// The API server's audit log (test/evictaudit) records each eviction request of a pod as it arrives
// (RequestReceived) and as it is answered (ResponseComplete): an outside clock for "the eviction
// request", free of the agent's own log and of the API server's handling time.

// auditArgs writes the audit policy into dir and returns the API server's flags for a blocking JSON
// audit log in dir, and its path.
func auditArgs(dir string) ([]string, string, error) { return evictaudit.Args(dir) }

// firstEvictions returns the first eviction request of each pod ("namespace/name") of reqs.
func firstEvictions(reqs []evictaudit.Request) map[string]evictaudit.Request {
	out := map[string]evictaudit.Request{}
	for _, r := range reqs {
		if _, seen := out[r.Namespace+"/"+r.Pod]; !seen {
			out[r.Namespace+"/"+r.Pod] = r
		}
	}
	return out
}

// readAudit returns the first eviction request of each pod in the audit log file at path.
func readAudit(path string) (map[string]evictaudit.Request, error) {
	reqs, err := evictaudit.Read(path)
	if err != nil {
		return nil, err
	}
	return firstEvictions(reqs), nil
}
