package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// The API server's audit log records each eviction request of a pod as it arrives (stage
// RequestReceived) and as it is answered (ResponseComplete): an outside clock for "the eviction request",
// free of the agent's own log and of the API server's handling time.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["ResponseStarted", "Panic"]
rules:
- level: Metadata
  verbs: ["create"]
  resources:
  - group: ""
    resources: ["pods/eviction"]
- level: None
`

// auditArgs writes the audit policy into dir and returns the API server's flags for a blocking JSON
// audit log in dir.
func auditArgs(dir string) ([]string, string, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, "", fmt.Errorf("write audit policy: %w", err)
	}
	log := filepath.Join(dir, "audit.log")
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + log, "--audit-log-format=json",
		"--audit-log-mode=blocking", "--audit-log-maxbackup=1"}, log, nil
}

// auditEviction is one eviction request of a pod as the audit log saw it.
type auditEviction struct {
	received, completed time.Time
	code                int32
	user                string
}

// auditEvent is the part of an audit.k8s.io/v1 Event read here.
type auditEvent struct {
	Stage     string `json:"stage"`
	AuditID   string `json:"auditID"`
	ObjectRef *struct {
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	User struct {
		Username string `json:"username"`
	} `json:"user"`
	ResponseStatus *struct {
		Code int32 `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
	StageTimestamp           time.Time `json:"stageTimestamp"`
}

// parseAudit returns the first eviction request of each pod ("namespace/name") in the audit log r, with
// its completion; lines that are not eviction events are skipped, a line that is not JSON is an error
// naming its line number.
func parseAudit(r io.Reader) (map[string]auditEviction, error) {
	out := map[string]auditEviction{}
	first := map[string]string{} // pod -> auditID of its first request
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("audit log line %d: %w", n, err)
		}
		if ev.ObjectRef == nil || ev.ObjectRef.Subresource != "eviction" {
			continue
		}
		pod := ev.ObjectRef.Namespace + "/" + ev.ObjectRef.Name
		id, seen := first[pod]
		if !seen {
			first[pod], id = ev.AuditID, ev.AuditID
			out[pod] = auditEviction{received: ev.RequestReceivedTimestamp, user: ev.User.Username}
		}
		if ev.AuditID != id || ev.Stage != "ResponseComplete" {
			continue
		}
		e := out[pod]
		e.completed = ev.StageTimestamp
		if ev.ResponseStatus != nil {
			e.code = ev.ResponseStatus.Code
		}
		out[pod] = e
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return out, nil
}

// readAudit parses the audit log file at path.
func readAudit(path string) (map[string]auditEviction, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := parseAudit(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
