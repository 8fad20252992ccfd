package evictaudit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// policy records each eviction request as it arrives (RequestReceived) and as it is answered
// (ResponseComplete), at level Metadata, and nothing else.
const policy = policyHead + `omitStages: ["ResponseStarted", "Panic"]
rules:
` + evictionRule + policyTail

// The parts of the audit policies: every policy starts with policyHead and ends with policyTail (log
// nothing else); evictionRule logs each eviction request at level Metadata.
const (
	policyHead   = "apiVersion: audit.k8s.io/v1\nkind: Policy\n"
	policyTail   = "- level: None\n"
	evictionRule = `- level: Metadata
  verbs: ["create"]
  resources:
  - group: ""
    resources: ["pods/eviction"]
`
)

// Args writes the audit policy into dir and returns the kube-apiserver flags for a blocking JSON audit
// log in dir (blocking: a request is in the file before it is answered), and that log's path.
func Args(dir string) (args []string, logPath string, err error) {
	return argsFor(dir, "audit", policy)
}

// argsFor writes the audit policy text to dir/<name>-policy.yaml and returns the kube-apiserver flags of
// a blocking JSON audit log at dir/<name>.log, and that path.
func argsFor(dir, name, policyText string) (args []string, logPath string, err error) {
	p := filepath.Join(dir, name+"-policy.yaml")
	if err := os.WriteFile(p, []byte(policyText), 0o644); err != nil {
		return nil, "", fmt.Errorf("write audit policy: %w", err)
	}
	logPath = filepath.Join(dir, name+".log")
	return []string{"--audit-policy-file=" + p, "--audit-log-path=" + logPath, "--audit-log-format=json",
		"--audit-log-mode=blocking", "--audit-log-maxbackup=1"}, logPath, nil
}

// Request is one eviction request as the audit log saw it.
type Request struct {
	AuditID        string
	Namespace, Pod string
	User           string
	Received       time.Time
	// Completed and Code are zero until the log holds the request's ResponseComplete.
	Completed time.Time
	Code      int32
}

// event is the part of an audit.k8s.io/v1 Event read here.
type event struct {
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

// Parse returns the eviction requests of the audit log r, one per audit ID, in the order of their first
// line. Events of other subresources are skipped; a line that is not JSON is an error naming its line
// number.
func Parse(r io.Reader) ([]Request, error) {
	var out []Request
	index := map[string]int{} // audit ID -> position in out
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("audit log line %d: %w", n, err)
		}
		if ev.ObjectRef == nil || ev.ObjectRef.Subresource != "eviction" {
			continue
		}
		i, seen := index[ev.AuditID]
		if !seen {
			i = len(out)
			index[ev.AuditID] = i
			out = append(out, Request{AuditID: ev.AuditID, Namespace: ev.ObjectRef.Namespace, Pod: ev.ObjectRef.Name,
				User: ev.User.Username, Received: ev.RequestReceivedTimestamp})
		}
		if ev.Stage == "ResponseComplete" {
			out[i].Completed = ev.StageTimestamp
			if ev.ResponseStatus != nil {
				out[i].Code = ev.ResponseStatus.Code
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return out, nil
}

// Read parses the audit log file at path.
func Read(path string) ([]Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	reqs, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return reqs, nil
}

// In returns the requests for pods of namespace ns, in the log's order.
func In(reqs []Request, ns string) []Request {
	var out []Request
	for _, r := range reqs {
		if r.Namespace == ns {
			out = append(out, r)
		}
	}
	return out
}

// Pods returns the pod name of each request, in order: a pod requested twice is named twice.
func Pods(reqs []Request) []string {
	out := make([]string, 0, len(reqs))
	for _, r := range reqs {
		out = append(out, r.Pod)
	}
	return out
}

// String is "pod (code)" of a request, or "pod (unanswered)".
func (r Request) String() string {
	if r.Code == 0 {
		return r.Pod + " (unanswered)"
	}
	return fmt.Sprintf("%s (%d)", r.Pod, r.Code)
}
