package evidence

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// MaxWindowRecords bounds the records kept in one Event's annotation; the count covers all.
const MaxWindowRecords = 20

// Owner is the object the evidence Event is on: the workload, or the pod itself for a bare pod.
type Owner struct {
	APIVersion string
	Kind       string
	Name       string
	UID        string
}

// Window is the evidence of the pods of one owner deleted within one event window.
type Window struct {
	Namespace string    `json:"namespace"`
	Owner     Owner     `json:"-"`
	OwnerName string    `json:"owner"` // Kind/name
	Start     time.Time `json:"firstDeletion"`
	Last      time.Time `json:"lastDeletion"`
	Count     int       `json:"count"`
	Pods      []Record  `json:"pods"` // the first MaxWindowRecords
	// DryRun marks the report of a dry run: nothing was deleted.
	DryRun bool `json:"dryRun,omitempty"`
}

// NewWindow opens a window for owner at now.
func NewWindow(namespace string, owner Owner, now time.Time) *Window {
	return &Window{Namespace: namespace, Owner: owner, OwnerName: owner.Kind + "/" + owner.Name, Start: now.UTC()}
}

// Add counts a deleted pod.
func (w *Window) Add(r Record, now time.Time) {
	w.Count++
	w.Last = now.UTC()
	if len(w.Pods) < MaxWindowRecords {
		w.Pods = append(w.Pods, r)
	}
}

// EventName is the name of the Event of a bare pod, and the prefix of an owner's Events:
// deterministic, so writing the same Event twice (a retry, a new leader) creates one.
func EventName(uid string) string { return Component + "." + uid }

// DryRunEventName is the name of a dry-run Event of a bare pod, and the prefix of an owner's: its own
// name, so a dry-run report never takes the name of the evidence of a later real deletion. Below
// pressure-janitor., which the chart's evidence policy leaves to the janitor alone.
func DryRunEventName(uid string) string { return Component + ".dryrun." + uid }

// Name is the Event's name: per bare pod, or per owner and window start.
func (w *Window) Name() string {
	name := EventName
	if w.DryRun {
		name = DryRunEventName
	}
	if w.Owner.Kind == "Pod" {
		return name(w.Owner.UID)
	}
	return fmt.Sprintf("%s.%d", name(w.Owner.UID), w.Start.Unix())
}

// Reason is the Event's reason: EventReason, or EventReasonDryRun for a dry run's report.
func (w *Window) Reason() string {
	if w.DryRun {
		return EventReasonDryRun
	}
	return EventReason
}

// dryRunPrefix starts the message of a dry-run Event, before "would have deleted ...".
const dryRunPrefix = "Dry-run, nothing deleted: would have "

// Message is what kubectl describe shows: one pod's full record, or the count, the first names
// and the latest record.
func (w *Window) Message() string {
	if len(w.Pods) == 0 {
		return ""
	}
	latest := w.Pods[len(w.Pods)-1]
	msg := latest.EventMessage()
	if w.Count > 1 {
		names := make([]string, 0, 5)
		for _, r := range w.Pods[:min(5, len(w.Pods))] {
			names = append(names, r.Pod)
		}
		more := ""
		if w.Count > len(names) {
			more = fmt.Sprintf(" and %d more", w.Count-len(names))
		}
		msg = fmt.Sprintf("Deleted %d pods of %s between %s and %s (%s%s); latest: %s", w.Count, w.OwnerName,
			w.Start.Format(time.RFC3339), w.Last.Format(time.RFC3339), strings.Join(names, ", "), more, msg)
	}
	if w.DryRun {
		msg = dryRunPrefix + "d" + strings.TrimPrefix(msg, "D")
	}
	return capMessage(msg)
}

// Encode is the window as the value of Annotation.
func (w *Window) Encode() (string, error) {
	data, err := json.Marshal(w)
	if err != nil {
		return "", fmt.Errorf("encode evidence of %s in namespace %s: %w", w.OwnerName, w.Namespace, err)
	}
	return string(data), nil
}
