package evictaudit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// writesPolicy records every write (create, update, patch, delete) of pods and their subresources
// (evictions included), nodes and their status, ConfigMaps and admission objects when it is answered:
// what a dry run must not do. Deletes at level Request, since their dryRun is in the body (the
// DeleteOptions), where the other verbs carry it in the URL.
const writesPolicy = policyHead + `omitStages: ["RequestReceived", "ResponseStarted", "Panic"]
rules:
` + writesRules + policyTail

// writesRules log every write of writesPolicy; bothPolicy gives each its own omitStages.
const writesRules = `- level: Request
  verbs: ["delete", "deletecollection"]
  resources:
  - group: ""
    resources: ["pods", "pods/*", "nodes", "nodes/*", "configmaps"]
  - group: "admissionregistration.k8s.io"
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
  resources:
  - group: ""
    resources: ["pods", "pods/*", "nodes", "nodes/*", "configmaps"]
  - group: "admissionregistration.k8s.io"
`

// WritesArgs is Args for a log of every write of pods, nodes, ConfigMaps and admission objects
// (ReadWrites); evictions are among them, so Read works on that log too, counting only their answers.
func WritesArgs(dir string) (args []string, logPath string, err error) {
	return argsFor(dir, "audit-writes", writesPolicy)
}

// Write is one answered write request as the audit log saw it.
type Write struct {
	Verb                         string
	Group, Resource, Subresource string
	Namespace, Name              string
	User, UserAgent              string
	// DryRun is a request with dryRun=All (in its URL, or in a delete's DeleteOptions): the API
	// server ran it through admission and persisted nothing.
	DryRun bool
	Code   int32
	// Received is when the API server received the request.
	Received time.Time
}

// String is "verb resource[/subresource] namespace/name (code)", with " dry-run" for a dry run.
func (w Write) String() string {
	res := w.Resource
	if w.Subresource != "" {
		res += "/" + w.Subresource
	}
	if w.Group != "" {
		res += "." + w.Group
	}
	s := fmt.Sprintf("%s %s %s/%s (%d) by %s", w.Verb, res, w.Namespace, w.Name, w.Code, w.UserAgent)
	if w.DryRun {
		s += " dry-run"
	}
	return s
}

// writeEvent is the part of an audit.k8s.io/v1 Event ParseWrites reads.
type writeEvent struct {
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	ObjectRef  *struct {
		APIGroup    string `json:"apiGroup"`
		Resource    string `json:"resource"`
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
	// RequestObject is a delete's DeleteOptions (level Request).
	RequestObject *struct {
		DryRun []string `json:"dryRun"`
	} `json:"requestObject"`
}

// ParseWrites returns the answered write requests of the audit log r in the log's order; a line that
// is not JSON is an error naming its line number.
func ParseWrites(r io.Reader) ([]Write, error) {
	var out []Write
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		var ev writeEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("audit log line %d: %w", n, err)
		}
		if ev.Stage != "ResponseComplete" || ev.ObjectRef == nil {
			continue
		}
		w := Write{Verb: ev.Verb, Group: ev.ObjectRef.APIGroup, Resource: ev.ObjectRef.Resource,
			Subresource: ev.ObjectRef.Subresource, Namespace: ev.ObjectRef.Namespace, Name: ev.ObjectRef.Name,
			User: ev.User.Username, UserAgent: ev.UserAgent, Received: ev.RequestReceivedTimestamp,
			DryRun: dryRunURI(ev.RequestURI) || (ev.RequestObject != nil && slices.Contains(ev.RequestObject.DryRun, "All"))}
		if ev.ResponseStatus != nil {
			w.Code = ev.ResponseStatus.Code
		}
		out = append(out, w)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return out, nil
}

// dryRunURI reports whether a request URI carries dryRun=All (the only dry-run value there is).
func dryRunURI(uri string) bool {
	_, query, _ := strings.Cut(uri, "?")
	for _, kv := range strings.Split(query, "&") {
		if kv == "dryRun=All" {
			return true
		}
	}
	return false
}

// ReadWrites parses the writes audit log file at path.
func ReadWrites(path string) ([]Write, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	ws, err := ParseWrites(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ws, nil
}

// By returns the writes whose user agent starts with agent, in the log's order.
func By(ws []Write, agent string) []Write {
	var out []Write
	for _, w := range ws {
		if strings.HasPrefix(w.UserAgent, agent) {
			out = append(out, w)
		}
	}
	return out
}

// bothPolicy is policy and writesPolicy in one log (an API server has one audit policy): each eviction
// request as it arrives and as it is answered, and every other write of writesPolicy when answered
// (the rule's own omitStages). Read and ReadWrites both work on its log.
var bothPolicy = policyHead + `omitStages: ["ResponseStarted", "Panic"]
rules:
` + evictionRule + strings.ReplaceAll(writesRules, "  verbs:", "  omitStages: [\"RequestReceived\"]\n  verbs:") + policyTail

// BothArgs is Args for a log that Read (eviction requests, received and answered) and ReadWrites (every
// answered write of pods, nodes, ConfigMaps and admission objects) both read.
func BothArgs(dir string) (args []string, logPath string, err error) {
	return argsFor(dir, "audit", bothPolicy)
}
