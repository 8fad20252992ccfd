package cli

// --local reads Linux's /proc and cgroup filesystem: this test builds on Linux only.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/explain"
)

func TestLocalKubeletConfigWithAnUnknownFieldOrAHugeQuantityIsAWarning(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "kubelet.yaml")
	data := readFile(t, filepath.Join("testdata", "local", "kubelet-config.yaml")) + "evictionHrad:\n  memory.available: 1Gi\n" +
		"systemReserved:\n  memory: \"1e30\"\n"
	if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	o := fixtureOptions("cgroupv2-systemd", cfg)
	out, err := runCLI(t, "explain", "--local", "--kubelet-config", cfg, "--proc-root", o.ProcRoot, "--cgroup-root", o.CgroupRoot,
		"--kubelet-root-dir", o.KubeletRootDir, "--runtime-root", o.RuntimeRoot, "--node-name", o.Node, "-o", "json")
	if err != nil {
		t.Fatalf("explain --local: %v", err)
	}
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kubelet config " + cfg + `: unknown field "evictionHrad": ignored`,
		cfg + ": field systemReserved.memory: 1e30 does not fit an int64"} {
		if !containsLine(r.Warnings, want) {
			t.Errorf("warnings %q, want one containing %q", r.Warnings, want)
		}
	}
}

func TestLocalReadsLocalStorageCapacityIsolationAndSaysWhatItCannotMeasure(t *testing.T) {
	base := readFile(t, filepath.Join("testdata", "local", "kubelet-config.yaml"))
	warning := "pod default/burstable (uid 66666666-7777-8888-9999-aaaaaaaaaaaa): it has an ephemeral-storage limit or " +
		"an emptyDir sizeLimit, but --local measured no disk usage of it"
	for _, tc := range []struct {
		name, extra string
		isolation   bool
	}{
		{"default: on", "", true},
		{"turned off", "localStorageCapacityIsolation: false\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "kubelet.yaml")
			if err := os.WriteFile(cfg, []byte(base+tc.extra), 0o600); err != nil {
				t.Fatal(err)
			}
			in, err := LocalInput(fixtureOptions("cgroupv2-systemd", cfg), fixedNow)
			if err != nil {
				t.Fatalf("LocalInput: %v", err)
			}
			pods := fixturePods()
			limit := resource.MustParse("1Gi")
			pods[1].Spec.Volumes = []corev1.Volume{{Name: "spool", VolumeSource: corev1.VolumeSource{
				EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &limit}}}}
			AddLocalPods(&in, pods)
			r := explain.Build(in)
			if r.Kubelet.LocalStorageCapacityIsolation != tc.isolation {
				t.Errorf("localStorageCapacityIsolation = %v, want %v", r.Kubelet.LocalStorageCapacityIsolation, tc.isolation)
			}
			if got := containsLine(r.Warnings, warning); got != tc.isolation {
				t.Errorf("warnings %q: has the unmeasured-usage warning = %v, want %v", r.Warnings, got, tc.isolation)
			}
		})
	}
}
