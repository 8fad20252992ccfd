package rank

import (
	"math/rand"
	"reflect"
	"testing"
	"testing/quick"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/signal"
)

// candidates is a random candidate list for testing/quick: small value ranges so that ties on every
// kubelet key, missing stats and missing fields all happen often.
type candidates struct {
	Sig    signal.Signal
	Layout signal.FilesystemLayout
	List   []Candidate
}

func maybe(r *rand.Rand, max int64) *uint64 {
	if r.Intn(5) == 0 {
		return nil
	}
	return u(uint64(r.Int63n(max)))
}

func (candidates) Generate(r *rand.Rand, size int) reflect.Value {
	all := signal.All()
	c := candidates{
		Sig:    all[r.Intn(len(all))],
		Layout: signal.FilesystemLayout{DedicatedImageFs: r.Intn(2) == 0, SplitContainerFs: r.Intn(2) == 0},
	}
	n := r.Intn(20)
	for i := 0; i < n; i++ {
		cand := Candidate{
			UID:                     string(rune('a' + r.Intn(4))),
			Namespace:               "ns",
			Name:                    string(rune('a' + r.Intn(4))),
			Priority:                int32(r.Intn(3) - 1),
			MemoryRequest:           r.Int63n(4) * 100,
			EphemeralStorageRequest: r.Int63n(4) * 100,
		}
		kinds := []VolumeKind{VolumeEmptyDir, VolumeHostPath, VolumeConfigMap, VolumeOther}
		for v := 0; v < r.Intn(3); v++ {
			vol := Volume{Name: string(rune('p' + v)), Kind: kinds[r.Intn(len(kinds))]}
			if r.Intn(3) == 0 {
				vol.Medium = "Memory"
			}
			cand.Volumes = append(cand.Volumes, vol)
		}
		if r.Intn(4) != 0 {
			st := &signal.PodStats{MemoryWorkingSet: maybe(r, 400), ProcessCount: maybe(r, 5)}
			for k := 0; k < r.Intn(3); k++ {
				st.Containers = append(st.Containers, signal.ContainerStats{Name: "c",
					RootfsUsed: maybe(r, 200), RootfsInodes: maybe(r, 200), LogsUsed: maybe(r, 200), LogsInodes: maybe(r, 200)})
			}
			for v := 0; v < r.Intn(4); v++ {
				st.Volumes = append(st.Volumes, signal.VolumeStats{Name: string(rune('p' + r.Intn(3))),
					UsedBytes: maybe(r, 200), InodesUsed: maybe(r, 200)})
			}
			cand.Stats = st
		}
		c.List = append(c.List, cand)
	}
	return reflect.ValueOf(c)
}

func TestRankAgreesWithReference(t *testing.T) {
	f := func(c candidates) bool {
		r := Rank(c.Sig, c.Layout, c.List)
		got := make([]int, len(r.Entries))
		for i, e := range r.Entries {
			got[i] = e.Index
		}
		want := ReferenceOrder(c.Sig, c.Layout, c.List)
		if diff := cmp.Diff(got, want); diff != "" {
			t.Logf("signal %s layout %+v (-got +want):\n%s", c.Sig, c.Layout, diff)
			return false
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 5000, Rand: rand.New(rand.NewSource(1))}); err != nil {
		t.Error(err)
	}
}

func TestRankStepsAreConsistentWithOrder(t *testing.T) {
	f := func(c candidates) bool {
		r := Rank(c.Sig, c.Layout, c.List)
		return len(c.List) == 0 || len(r.Steps) == len(r.Entries)-1
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 500, Rand: rand.New(rand.NewSource(2))}); err != nil {
		t.Error(err)
	}
}
