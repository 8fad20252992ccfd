package reclaim

import (
	"strings"
	"testing"
)

func TestParseStatRejectsWhatIsNotKeyValue(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]int64
		wantErr  string
	}{
		{name: "flat keyed file parses", in: "cache 4096\nrss 8192\n", want: map[string]int64{"cache": 4096, "rss": 8192}},
		{name: "blank lines are skipped", in: "\nfile 1\n\n", want: map[string]int64{"file": 1}},
		{name: "three fields name the line", in: "a 1 2\n", wantErr: `line 1 "a 1 2"`},
		{name: "negative value names key and value", in: "x -1\n", wantErr: `key "x" value "-1"`},
		{name: "text value names key and value", in: "ok 1\nx y\n", wantErr: `line 2 key "x" value "y"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %d, want %d", k, got[k], v)
				}
			}
		})
	}
}

func TestParseSomeAvg10ReadsTheSomeLine(t *testing.T) {
	tests := []struct {
		name, in string
		want     float64
		wantErr  bool
	}{
		{name: "some and full lines", in: "some avg10=12.50 avg60=1.00 avg300=0.00 total=1\nfull avg10=3.00 avg60=0 avg300=0 total=0\n", want: 12.5},
		{name: "no some line fails", in: "full avg10=3.00\n", wantErr: true},
		{name: "some without avg10 fails", in: "some avg60=1\n", wantErr: true},
		{name: "above 100 percent fails", in: "some avg10=101\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSomeAvg10([]byte(tt.in))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("parseSomeAvg10 = %v, %v; want %v, err %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseBytesReadsMaxAsUnlimited(t *testing.T) {
	for in, want := range map[string]int64{"max\n": -1, "4096\n": 4096, "0": 0} {
		if got, err := parseBytes([]byte(in)); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-5", "1k", "9223372036854775808"} {
		if _, err := parseBytes([]byte(in)); err == nil {
			t.Errorf("parseBytes(%q): want an error", in)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("cache 4096\nrss 0\ntotal_inactive_file 12\n"))
	f.Add([]byte("anon 1\nfile 2\nworkingset_refault_file 3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseStat(b)
		if err != nil {
			return
		}
		for k, v := range m {
			if v < 0 || k == "" || strings.ContainsAny(k, " \t\n") {
				t.Fatalf("parsed %q=%d from %q", k, v, b)
			}
		}
	})
}

func FuzzParseSomeAvg10(f *testing.F) {
	f.Add([]byte("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := parseSomeAvg10(b); err == nil && (v < 0 || v > 100) {
			t.Fatalf("avg10 %v from %q", v, b)
		}
	})
}

func FuzzParseBytes(f *testing.F) {
	f.Add([]byte("max\n"))
	f.Add([]byte("9223372036854771712\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := parseBytes(b); err == nil && v < -1 {
			t.Fatalf("%d from %q", v, b)
		}
	})
}
