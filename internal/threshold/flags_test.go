package threshold

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFlagMap(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]string
		wantErr string
	}{
		{"P11 pairs are split on comma and trimmed", "memory.available<100Mi, nodefs.available<10%",
			map[string]string{"memory.available": "100Mi", "nodefs.available": "10%"}, ""},
		{"P11 greater-than is a malformed pair", "memory.available>100Mi", nil, "malformed pair, expect string<string"},
		{"less-or-equal keeps '=' in the value", "memory.available<=1Gi", map[string]string{"memory.available": "=1Gi"}, ""},
		{"empty items are skipped", ",,memory.available<1Gi,", map[string]string{"memory.available": "1Gi"}, ""},
		{"empty flag is an empty map", "", map[string]string{}, ""},
		{"later duplicates win", "memory.available<1Gi,memory.available<2Gi", map[string]string{"memory.available": "2Gi"}, ""},
		{"whitespace-only item is malformed", " ", nil, "malformed pair, expect string<string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFlagMap(tc.in)
			checkFlag(t, got, err, tc.want, tc.wantErr)
		})
	}
}

func TestParseKeyValueFlagMap(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]string
		wantErr string
	}{
		{"grace periods", "memory.available=1m30s, imagefs.available = 2m",
			map[string]string{"memory.available": "1m30s", "imagefs.available": "2m"}, ""},
		{"value may contain '='", "a=b=c", map[string]string{"a": "b=c"}, ""},
		{"item without '=' is malformed", "memory.available<1Gi", nil, "malformed pair, expect string=string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseKeyValueFlagMap(tc.in)
			checkFlag(t, got, err, tc.want, tc.wantErr)
		})
	}
}

func checkFlag(t *testing.T, got map[string]string, err error, want map[string]string, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) || !errors.Is(err, ErrMalformedFlag) {
			t.Errorf("err = %v, want one containing %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error %v", err)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("map (-got +want):\n%s", diff)
	}
}
