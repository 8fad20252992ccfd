package evidence

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Decode reads the records of an Annotation value: a Window ({"count": n, "pods": [records]}), or,
// as older janitors wrote it, a single Record.
func Decode(annotation string) ([]Record, error) {
	var w struct {
		Pods []Record `json:"pods"`
	}
	if err := json.Unmarshal([]byte(annotation), &w); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", Annotation, err)
	}
	if w.Pods != nil {
		return w.Pods, nil
	}
	var r Record
	if err := json.Unmarshal([]byte(annotation), &r); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", Annotation, err)
	}
	return []Record{r}, nil
}

// Verified reports whether an Event with this name, source component and reporting controller is
// one pressure-janitor wrote: only its ServiceAccount may write Events named and sourced as the
// janitor's (the chart's pressure-janitor-evidence admission policy), so any other is unverified.
func Verified(name, sourceComponent, reportingController string) bool {
	return strings.HasPrefix(name, Component+".") && sourceComponent == Component &&
		(reportingController == "" || reportingController == Component)
}
