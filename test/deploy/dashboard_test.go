package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ratio matches a division in PromQL (not the one inside a range selector or a label matcher).
var ratio = regexp.MustCompile(`\)\s*/\s*\S|\}\s*/\s*\S`)

// unitOf is the Grafana unit an expression's result has, from the metric names' unit suffixes
// (one unit per metric name): a ratio of two series is a share, rates and increases of counters
// and unit-less gauges are counts, seconds and bytes are seconds and bytes.
func unitOf(expr string) string {
	if ratio.MatchString(expr) {
		return "percentunit"
	}
	names := metricName.FindAllString(expr, -1)
	all := func(suffix string) bool {
		for _, n := range names {
			if !strings.HasSuffix(strings.TrimSuffix(n, "_bucket"), suffix) {
				return false
			}
		}
		return len(names) > 0
	}
	switch {
	case all("_seconds"):
		return "s"
	case all("_bytes") && !strings.Contains(expr, "rate(") && !strings.Contains(expr, "increase("):
		return "bytes"
	}
	return "short"
}

// TestDashboardPanelUnitsFollowTheMetricUnits: a panel's unit is the unit of every series it draws
// (bytes panels draw only _bytes metrics, PIDs and inodes are counts, latencies seconds), so a
// panel never mixes units under one axis.
func TestDashboardPanelUnitsFollowTheMetricUnits(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir(t), "dashboards", "pressure.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title       string `json:"title"`
			FieldConfig struct {
				Defaults struct {
					Unit string `json:"unit"`
				} `json:"defaults"`
			} `json:"fieldConfig"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			if want := unitOf(target.Expr); p.FieldConfig.Defaults.Unit != want {
				t.Errorf("panel %q: unit %q, but %s is in %s", p.Title, p.FieldConfig.Defaults.Unit, target.Expr, want)
			}
			checked++
		}
	}
	if checked < 15 {
		t.Fatalf("only %d panel targets found", checked)
	}
}
