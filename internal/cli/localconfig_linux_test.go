package cli

// --local reads Linux's /proc and cgroup filesystem: this test builds on Linux only.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestLocalKubeletConfigWithAnUnknownFieldIsAWarning(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "kubelet.yaml")
	data := readFile(t, filepath.Join("testdata", "local", "kubelet-config.yaml")) + "evictionHrad:\n  memory.available: 1Gi\n"
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
	want := "kubelet config " + cfg + `: unknown field "evictionHrad": ignored`
	if !containsLine(r.Warnings, want) {
		t.Errorf("warnings %q, want one containing %q", r.Warnings, want)
	}
}
