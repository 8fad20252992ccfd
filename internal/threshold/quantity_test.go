package threshold

import (
	"strings"
	"testing"
	"time"
)

func TestParseQuantity(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{"a binary quantity is kept", "256Mi", "256Mi", ""},
		{"a decimal beyond int64 within the bound is kept (the kubelet compares it exactly)", "1e30", "1e30", ""},
		{"a fraction is kept", "1.5Gi", "1536Mi", ""},
		{"a zero with a small exponent is a plain zero", "0e5", "0", ""},
		{"a zero with a huge exponent is refused", "0E2000000003000003", "", "exponent is beyond"},
		{"a zero written without digits and a huge exponent is refused", "E2000000003000003", "", "exponent is beyond"},
		{"a huge exponent is refused instead of hanging the first comparison", "1E2000000003000003", "", "out of range"},
		{"a tiny exponent is refused", "1E-2000000003000003", "", "out of range"},
		{"the bound itself is accepted", "1e40", "10e39", ""},
		{"one past the bound is refused", "1e41", "", "out of range"},
		{"a negative huge quantity is refused", "-1E2000000003000003", "", "out of range"},
		{"an exponent past twice the bound is refused before resource.ParseQuantity", "1e81", "", "exponent is beyond"},
		{"the exa suffix is not an exponent", "2E", "2E", ""},
		{"the exbi suffix is not an exponent", "1Ei", "1Ei", ""},
		{"not a quantity is resource.ParseQuantity's error", "x", "", "quantities must match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan struct{})
			go func() {
				defer close(done)
				q, err := ParseQuantity(tc.in)
				switch {
				case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
					t.Errorf("ParseQuantity(%q) error %v, want one containing %q", tc.in, err, tc.err)
				case tc.err == "" && err != nil:
					t.Errorf("ParseQuantity(%q): %v", tc.in, err)
				case tc.err == "" && q.String() != tc.want:
					t.Errorf("ParseQuantity(%q) = %s, want %s", tc.in, q.String(), tc.want)
				case tc.err == "":
					_ = q.Cmp(q) // returns: no exponent loop
				}
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("ParseQuantity(%q) and a comparison did not return within 10s", tc.in)
			}
		})
	}
}
