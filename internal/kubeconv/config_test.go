package kubeconv

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/threshold"
)

func loadFile(t *testing.T, path string) KubeletConfig {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kc, err := LoadKubeletConfig(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

func thresholdsOf(t *testing.T, in threshold.Input) []string {
	t.Helper()
	cfg, err := threshold.ParseConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, th := range cfg.Thresholds {
		out = append(out, th.String())
	}
	return out
}

func TestLoadKubeletConfig(t *testing.T) {
	tests := []struct {
		name          string
		path          string
		wantEffective bool
		wantTh        []string
		wantPeriod    time.Duration
	}{
		{"configz wrapper is the effective config with min reclaim on hard and soft memory thresholds",
			"testdata/configz.json", true,
			[]string{"allocatableMemory.available<100Mi minReclaim=500Mi", "imagefs.available<15%", "imagefs.inodesFree<5%",
				"memory.available<100Mi minReclaim=500Mi", "memory.available<1536Mi grace=1m30s minReclaim=500Mi",
				"nodefs.available<10%", "nodefs.inodesFree<5%"},
			5 * time.Minute},
		{"configz without evictionHard means no hard thresholds and 0s transition period is 0",
			"testdata/configz-empty-eviction.json", true, nil, 0},
		{"config file with mergeDefaultEvictionSettings merges the defaults",
			"testdata/kubelet-config.yaml", false,
			[]string{"allocatableMemory.available<200Mi", "imagefs.available<15%", "imagefs.inodesFree<5%",
				"memory.available<200Mi", "nodefs.available<10%", "nodefs.available<15% grace=2m0s", "nodefs.inodesFree<5%"},
			5 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kc := loadFile(t, tc.path)
			if kc.Effective != tc.wantEffective {
				t.Errorf("Effective = %v, want %v", kc.Effective, tc.wantEffective)
			}
			in := kc.ThresholdInput()
			if diff := cmp.Diff(thresholdsOf(t, in), tc.wantTh); diff != "" {
				t.Errorf("thresholds (-got +want):\n%s", diff)
			}
			cfg, _ := threshold.ParseConfig(in)
			if cfg.PressureTransitionPeriod != tc.wantPeriod {
				t.Errorf("transition period = %v, want %v", cfg.PressureTransitionPeriod, tc.wantPeriod)
			}
		})
	}
}

func TestThresholdInputFileSemantics(t *testing.T) {
	tests := []struct {
		name   string
		doc    string
		wantTh []string
	}{
		{"file without evictionHard gets the five Linux defaults", `kind: KubeletConfiguration`,
			[]string{"allocatableMemory.available<100Mi", "imagefs.available<15%", "imagefs.inodesFree<5%",
				"memory.available<100Mi", "nodefs.available<10%", "nodefs.inodesFree<5%"}},
		{"evictionHard: {} in a file is present and empty: no hard thresholds", "evictionHard: {}\n", nil},
		{"enforceNodeAllocatable: [] disables the allocatable copy",
			"evictionHard: {memory.available: 300Mi}\nenforceNodeAllocatable: []\n", []string{"memory.available<300Mi"}},
		{"bare JSON works too", `{"evictionHard":{"pid.available":"1000"}}`, []string{"pid.available<1k"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kc, err := LoadKubeletConfig(strings.NewReader(tc.doc), "inline")
			if err != nil {
				t.Fatal(err)
			}
			if kc.Effective {
				t.Errorf("a bare configuration is not /configz output")
			}
			if diff := cmp.Diff(thresholdsOf(t, kc.ThresholdInput()), tc.wantTh); diff != "" {
				t.Errorf("thresholds (-got +want):\n%s", diff)
			}
		})
	}
}

func TestLoadKubeletConfigErrors(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"wrong field type names file and field", `evictionMaxPodGracePeriod: "sixty"`,
			`kubelet config node.yaml: json: cannot unmarshal string into Go struct field KubeletConfiguration.evictionMaxPodGracePeriod of type int32`},
		{"wrong kind", "kind: Pod\n", `kubelet config node.yaml: kind "Pod" is not KubeletConfiguration`},
		{"wrong apiVersion", "apiVersion: v1\n", `kubelet config node.yaml: apiVersion "v1" is not kubelet.config.k8s.io/v1beta1`},
		{"not an object", "- a\n", `kubelet config node.yaml: not an object`},
		{"truncated JSON is reported as JSON with its line and column", "{\n  \"kubeletconfig\": {\n    \"evictionHard\": {",
			`kubelet config node.yaml: not valid JSON: line 3, column 22: unexpected end of JSON input`},
		{"YAML that is not JSON is reported as YAML", "a: [\n", `kubelet config node.yaml: not JSON or YAML: yaml: `},
		{"more than 1 MiB is refused before parsing", "# " + strings.Repeat("x", MaxKubeletConfigBytes) + "\nevictionHard: {}\n",
			`kubelet config node.yaml: larger than 1048576 bytes`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadKubeletConfig(strings.NewReader(tc.doc), "node.yaml")
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err = %v, want prefix %q", err, tc.want)
			}
		})
	}
}

func TestLoadKubeletConfigWarnsWhereTheKubeletsStrictDecodingFails(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"a known configuration decodes strictly", "evictionHard: {memory.available: 300Mi}\n", nil},
		{"an unknown field is a warning naming the file and field", "evictionHard: {memory.available: 300Mi}\nevictionHrad: {}\n",
			[]string{`kubelet config node.yaml: unknown field "evictionHrad": ignored`}},
		{"an unknown field inside /configz names the field",
			`{"kubeletconfig": {"evictionHard": {"memory.available": "300Mi"}, "cgroupDriverX": "systemd"}}`,
			[]string{`kubelet config node.yaml: unknown field "cgroupDriverX": ignored`}},
		{"a duplicate field is a warning", `{"evictionMaxPodGracePeriod": 10, "evictionMaxPodGracePeriod": 20}`,
			[]string{`kubelet config node.yaml: yaml: unmarshal errors: line 1: key "evictionMaxPodGracePeriod" already set in map: ignored`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kc, err := LoadKubeletConfig(strings.NewReader(tc.doc), "node.yaml")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range kc.Warnings {
				got = append(got, strings.SplitAfter(w, "ignored")[0])
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("warnings (-got +want):\n%s", diff)
			}
		})
	}
}

func FuzzLoadKubeletConfig(f *testing.F) {
	for _, p := range []string{"testdata/configz.json", "testdata/kubelet-config.yaml", "testdata/configz-empty-eviction.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("evictionHard: {}\n")
	f.Add(`{"kubeletconfig": null}`)
	f.Add(`{"evictionHard":{"memory.available":"0%"},"evictionSoft":{"x":"1"}}`)
	f.Add(`{"evictionHard":{"memory.available":"99999999Ei"},"unknownField":1,"unknownField":2}`)
	f.Fuzz(func(t *testing.T, doc string) {
		kc, err := LoadKubeletConfig(strings.NewReader(doc), "fuzz")
		if err != nil {
			return
		}
		if kc.Config == nil {
			t.Fatal("nil config without error")
		}
		for _, w := range kc.Warnings {
			if !strings.HasPrefix(w, "kubelet config fuzz: ") {
				t.Fatalf("warning %q does not name the file", w)
			}
		}
		cfg, err := threshold.ParseConfig(kc.ThresholdInput())
		if err == nil {
			for _, th := range cfg.Thresholds {
				if !th.Signal.Valid() {
					t.Fatalf("invalid signal in %v", th)
				}
			}
		}
	})
}

func TestLoadKubeletConfigAcceptsAYAMLFlowMapping(t *testing.T) {
	// It starts with '{' like JSON but is YAML: JSON's error must not replace a YAML success.
	kc, err := LoadKubeletConfig(strings.NewReader("{evictionHard: {memory.available: 300Mi}}\n"), "node.yaml")
	if err != nil {
		t.Fatalf("YAML flow mapping: %v", err)
	}
	if got := kc.Config.EvictionHard["memory.available"]; got != "300Mi" {
		t.Errorf("evictionHard memory.available = %q, want 300Mi", got)
	}
}
