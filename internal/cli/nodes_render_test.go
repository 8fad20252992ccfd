package cli

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kube-pressure/pressure/internal/explain"
)

func sampleNodes() NodesReport {
	m := explain.Margin{Signal: "memory.available", Threshold: "memory.available<100Mi", Available: "67108864",
		Resolved: "104857600", Margin: "-37748736", Capacity: "17179869184", PercentOfCapacity: -0.2, Met: true}
	m.Human.Available, m.Human.Resolved, m.Human.Margin = "64Mi", "100Mi", "-36Mi"
	return NodesReport{Partial: true, Items: []NodeMargin{
		{Node: "tight", Tightest: &m, TimeToThreshold: "0s", ThresholdsMet: []string{"memory.available"},
			Conditions: []string{"MemoryPressure"}},
		{Node: "silent", Error: "GET /api/v1/nodes/silent/proxy/stats/summary: no answer within 2s"},
	}}
}

func TestNodesRendering(t *testing.T) {
	for _, tc := range []struct {
		name, output string
		want         []string
		wantErr      string
	}{
		{"the table says the margin and no answer", "text", []string{
			"NODE    SIGNAL            AVAILABLE  THRESHOLD  MARGIN  OF CAPACITY  TIME TO THRESHOLD\n",
			"tight   memory.available  64Mi       100Mi      -36Mi   -0.2%        0s\n",
			"silent  no answer         -          -          -       -            -\n"},
			"partial: 1 of 2 nodes did not answer"},
		{"wide adds what is met, the conditions and why", "wide", []string{
			"MET               CONDITIONS      ERROR", "memory.available  MemoryPressure  -",
			"GET /api/v1/nodes/silent/proxy/stats/summary: no answer within 2s"}, "partial: 1 of 2"},
		{"json marks the answer partial", "json", []string{`"partial": true`, `"error": "GET /api/v1/nodes/silent`,
			`"margin": "-37748736"`}, ""},
		{"jsonpath goes through kubectl's printer", `jsonpath={.items[*].node}`, []string{"tight silent"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := renderNodes(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, sampleNodes(), tc.output)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("-o %q output lacks %q:\n%s", tc.output, w, out.String())
				}
			}
			if !strings.Contains(errOut.String(), tc.wantErr) || (tc.wantErr == "" && errOut.Len() > 0) {
				t.Errorf("-o %q stderr %q, want %q", tc.output, errOut.String(), tc.wantErr)
			}
		})
	}
}
