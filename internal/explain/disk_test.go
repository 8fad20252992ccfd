package explain

import (
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// diskNode is a one-filesystem node at 8Gi free of 100Gi with the kubelet's nodefs.available<10%, and a
// pod writing 3Gi into its emptyDir.
func diskNode(t *testing.T) Input {
	cfg := parse(t, threshold.Input{EvictionHardSet: true, EvictionHard: map[string]string{"nodefs.available": "10%"},
		EvictionMinimumReclaim: map[string]string{"nodefs.available": "1Mi"}})
	writer := bePod("writer", 10*mi)
	writer.Volumes = []rank.Volume{{Name: "data", Kind: rank.VolumeEmptyDir}}
	writer.Stats.Volumes = []signal.VolumeStats{{Name: "data", UsedBytes: u64(3 * gi)}}
	snap := signal.Snapshot{Observations: map[signal.Signal]signal.Observation{
		signal.NodeFsAvailable: {Available: 8 * gi, Capacity: 100 * gi, Time: t0},
	}}
	return Input{Node: "n", Now: t0, Config: cfg, Capacity: map[string]int64{"memory": 8 * gi}, Snapshot: snap,
		Candidates: []rank.Candidate{writer}}
}

func TestDiskHeadroomWithheldAtTheImageGCStartIsShownWithWhy(t *testing.T) {
	r := Build(diskNode(t))
	var nodefs *AgentThreshold
	for i := range r.Pressure.Thresholds {
		if r.Pressure.Thresholds[i].Signal == string(signal.NodeFsAvailable) {
			nodefs = &r.Pressure.Thresholds[i]
		}
	}
	if nodefs == nil || nodefs.Headroom != "0" || !strings.Contains(nodefs.HeadroomWithheld, "image GC start") {
		t.Fatalf("nodefs threshold %+v, want headroom 0 withheld at the image GC start", nodefs)
	}
	if nodefs.Resolved != nodefs.KubeletResolved {
		t.Errorf("agent threshold %s, want the kubelet's %s", nodefs.Resolved, nodefs.KubeletResolved)
	}
	var b strings.Builder
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0 (image GC)", "nodefs.available<10% minReclaim=1Mi: no headroom: the raised threshold"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

func TestDiskReclaimEstimateDecidesWhetherTheAgentWaitsForTheKubeletsGC(t *testing.T) {
	for _, tc := range []struct {
		name    string
		r       *policy.Reclaimable
		victims int
		note    string
	}{
		{"unused images cover the need: no victim, the GC reclaims first", &policy.Reclaimable{UnusedImages: 4 * gi, Source: "test"},
			0, "could free enough"},
		{"too few unused images: the writer goes", &policy.Reclaimable{UnusedImages: 1 * gi, Source: "test"}, 1, "not enough"},
		{"no estimate: reclaim counts as nothing, no note", nil, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := diskNode(t)
			in.Reclaimable = tc.r
			ps := Build(in).Pressure
			if len(ps.Victims) != tc.victims {
				t.Errorf("victims %+v, want %d", ps.Victims, tc.victims)
			}
			var note string
			for _, n := range ps.Notes {
				if strings.HasPrefix(n, "node-level reclaim for nodefs.available") {
					note = n
				}
			}
			if (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
				t.Errorf("reclaim note %q, want one containing %q", note, tc.note)
			}
		})
	}
}
