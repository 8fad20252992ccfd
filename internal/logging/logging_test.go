package logging

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// jsonLines decodes every line of out, failing on a line that is not a JSON object.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("not a JSON line: %q (%v)", sc.Text(), err)
			continue
		}
		lines = append(lines, m)
	}
	return lines
}

// TestClientGoLogLineComesOutAsJSON makes client-go log for real: an API response with a Warning
// header, which client-go's default warning handler logs through klog.
func TestClientGoLogLineComesOutAsJSON(t *testing.T) {
	var out bytes.Buffer
	if _, err := Setup(&out, Flags{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Warning", `299 - "policy/v1beta1 is gone, said the test server"`)
		_, _ = w.Write([]byte(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"default"}}`))
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	klog.Flush()
	found := false
	for _, l := range jsonLines(t, out.String()) {
		if msg, _ := l["msg"].(string); strings.Contains(msg, "said the test server") {
			found = true
			if l["level"] != "INFO" || l["time"] == nil {
				t.Errorf("client-go line %v: want level INFO and a time, as slog writes them", l)
			}
		}
	}
	if !found {
		t.Errorf("client-go's warning is not among the JSON lines:\n%s", out.String())
	}
}

func TestVerbosityReachesKlogAndTheHandler(t *testing.T) {
	cases := []struct {
		name      string
		flags     Flags
		v4, debug bool
	}{
		{"default: info, no V(4) lines", Flags{Level: "info"}, false, false},
		{"-v 4 shows client-go V(4) lines and debug", Flags{Level: "info", Verbosity: 4}, true, true},
		{"--log-level debug alone keeps klog at V(0)", Flags{Level: "debug"}, false, true},
		{"--log-level error hides info", Flags{Level: "error"}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			logger, err := Setup(&out, tc.flags)
			if err != nil {
				t.Fatal(err)
			}
			klog.V(4).InfoS("klog v4 line")
			klog.V(1).InfoS("klog v1 line")
			logger.Debug("slog debug line")
			klog.Flush()
			got := out.String()
			if strings.Contains(got, "klog v4 line") != tc.v4 {
				t.Errorf("V(4) line shown=%v, want %v:\n%s", !tc.v4, tc.v4, got)
			}
			if strings.Contains(got, "slog debug line") != tc.debug {
				t.Errorf("debug line shown=%v, want %v:\n%s", !tc.debug, tc.debug, got)
			}
			for _, l := range jsonLines(t, got) {
				if lv := l["level"]; lv != "INFO" && lv != "DEBUG" && lv != "WARN" && lv != "ERROR" {
					t.Errorf("level %q in %v: want one of DEBUG, INFO, WARN, ERROR", lv, l)
				}
			}
		})
	}
}

func TestBadLevelNamesTheFlagAndValue(t *testing.T) {
	for _, f := range []Flags{{Level: "verbose"}, {Level: "info+2"}, {Level: "info", Verbosity: -1}} {
		if _, err := Setup(&bytes.Buffer{}, f); err == nil {
			t.Errorf("Setup(%+v) accepted", f)
		} else if !strings.Contains(err.Error(), "--log-level") && !strings.Contains(err.Error(), "-v ") {
			t.Errorf("Setup(%+v): %v does not name the flag", f, err)
		}
	}
}
