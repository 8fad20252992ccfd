package evidence

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

func TestWindowKeepsTheFirstRecordsAndCountsAll(t *testing.T) {
	w := NewWindow("shop", Owner{Kind: "Job", Name: "j", UID: "uid-j"}, t0)
	for i := range MaxWindowRecords + 5 {
		w.Add(Record{Pod: fmt.Sprintf("p-%02d", i)}, t0)
	}
	if w.Count != MaxWindowRecords+5 || len(w.Pods) != MaxWindowRecords {
		t.Errorf("count %d, %d records; want %d, %d", w.Count, len(w.Pods), MaxWindowRecords+5, MaxWindowRecords)
	}
	if msg := w.Message(); !strings.Contains(msg, "(p-00, p-01, p-02, p-03, p-04 and 20 more)") {
		t.Errorf("message %q does not name the first five and count the rest", msg)
	}
}

func TestEventNameIsPerBarePodOrPerOwnerAndWindowStart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		owner Owner
		want  string
	}{
		{"a bare pod's Event is named after the pod", Owner{Kind: "Pod", Name: "bare", UID: "uid-p"}, "pressure-janitor.uid-p"},
		{"a workload's Event is named after the owner and the window start", Owner{Kind: "Deployment", Name: "web", UID: "uid-d"},
			"pressure-janitor.uid-d.1782907200"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewWindow("shop", tc.owner, t0).Name(); got != tc.want {
				t.Errorf("Name() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMessageIsCappedAtTheEventsAPILimit(t *testing.T) {
	msg := Record{Pod: "p", Message: strings.Repeat("x", 5000)}.EventMessage()
	if len(msg) != MaxMessage || !strings.HasSuffix(msg, "...") {
		t.Errorf("message length %d; want %d ending in ...", len(msg), MaxMessage)
	}
}

func TestListTextIsSortedByKey(t *testing.T) {
	if got := ListText(map[string]string{"memory": "128Mi", "cpu": "100m"}); got != "cpu=100m,memory=128Mi" {
		t.Errorf("ListText = %q, want cpu=100m,memory=128Mi", got)
	}
}

// The janitor writes one Event per owner and window holding several pods' records; Decode must
// return each, and still read the single record older janitors wrote.
func TestDecodeReadsAWindowAndTheSingleRecordOfOlderJanitors(t *testing.T) {
	w := NewWindow("shop", Owner{Kind: "Deployment", Name: "web", UID: "d-1"}, t0)
	a := Record{Pod: "web-a", Namespace: "shop", UID: "u-a", Reason: "Evicted", EvictedAt: t0,
		Requests: map[string]string{"memory": "128Mi"}}
	b := Record{Pod: "web-b", Namespace: "shop", UID: "u-b", Reason: "Evicted", EvictedAt: t0}
	w.Add(a, t0)
	w.Add(b, t0.Add(time.Second))
	window, err := w.Encode()
	if err != nil {
		t.Fatal(err)
	}
	single, err := json.Marshal(Record{Pod: "solo", Namespace: "shop", UID: "u-s", Reason: "Evicted", EvictedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, annotation string
		want             []Record
		wantErr          bool
	}{
		{name: "window of two pods of a Deployment", annotation: window, want: []Record{a, b}},
		{name: "single record of an older janitor", annotation: string(single),
			want: []Record{{Pod: "solo", Namespace: "shop", UID: "u-s", Reason: "Evicted", EvictedAt: t0}}},
		{name: "not JSON is an error naming the annotation", annotation: "{", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(tc.annotation)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), Annotation) {
					t.Errorf("Decode = %v, %v; want an error naming %s", got, err, Annotation)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(got, tc.want); d != "" {
				t.Errorf("Decode (-got +want):\n%s", d)
			}
		})
	}
}

func TestVerifiedOnlyAsTheJanitorWritesIt(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		event, source, through string
		want                   bool
	}{
		{"the janitor's name and source", "pressure-janitor.d-1.1", Component, "", true},
		{"the janitor as reporting controller", "pressure-janitor.d-1.1", Component, Component, true},
		{"another source", "pressure-janitor.d-1.1", "kubelet", "", false},
		{"no source", "pressure-janitor.d-1.1", "", "", false},
		{"another name", "web.17a", Component, "", false},
		{"the janitor's name without the dot", "pressure-janitor", Component, "", false},
		{"another reporting controller", "pressure-janitor.d-1.1", Component, "someone", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Verified(tc.event, tc.source, tc.through); got != tc.want {
				t.Errorf("Verified(%q, %q, %q) = %v, want %v", tc.event, tc.source, tc.through, got, tc.want)
			}
		})
	}
}

// FuzzDecode: any annotation gives records or an error, never a panic; records re-encoded in a window
// decode to the same records.
func FuzzDecode(f *testing.F) {
	w := NewWindow("shop", Owner{Kind: "Deployment", Name: "web", UID: "d-1"}, t0)
	w.Add(Record{Pod: "web-a", UID: "u-a", Requests: map[string]string{"cpu": "1"}}, t0)
	seed, _ := w.Encode()
	f.Add(seed)
	f.Add(`{"pod":"solo","uid":"u-s","evictedAt":"2026-07-01T12:00:00Z"}`)
	f.Add(`{"pods":[]}`)
	f.Add(`{"pods":null}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, annotation string) {
		recs, err := Decode(annotation)
		if err != nil {
			return
		}
		again := NewWindow("ns", Owner{Kind: "Job", Name: "j", UID: "u"}, t0)
		for _, r := range recs {
			again.Add(r, t0)
		}
		if len(recs) > MaxWindowRecords {
			return // a window keeps only the first records
		}
		enc, err := again.Encode()
		if err != nil {
			t.Fatalf("re-encode %d records: %v", len(recs), err)
		}
		back, err := Decode(enc)
		if err != nil {
			t.Fatalf("decode re-encoded %q: %v", enc, err)
		}
		if len(recs) == 0 {
			return // an empty window reads back as one empty record (the older single-record form)
		}
		if d := cmp.Diff(back, recs); d != "" {
			t.Errorf("round trip (-got +want):\n%s", d)
		}
	})
}
