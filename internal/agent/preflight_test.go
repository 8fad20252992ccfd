package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPreflightNamesAMissingKubeletFileAndTheValueToSet(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("config.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n")
	empty := write("empty.yaml", "") // what the chart's FileOrCreate mount leaves where the host has no file
	for _, tc := range []struct {
		name, path, problem string
	}{
		{"a kubelet configuration file passes", good, ""},
		{"a missing file is named, with the value to set", filepath.Join(dir, "absent.yaml"), "does not exist"},
		{"an empty file (the mount created it) is not read as the kubelet's defaults", empty, "is empty"},
		{"a directory is not a configuration", dir, "is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkKubeletFile(tc.path)
			if tc.problem == "" {
				if err != nil {
					t.Errorf("checkKubeletFile(%s) = %v, want nil", tc.path, err)
				}
				return
			}
			if !errors.Is(err, ErrKubeletFileMissing) {
				t.Fatalf("checkKubeletFile(%s) = %v, want ErrKubeletFileMissing", tc.path, err)
			}
			msg := err.Error()
			for _, want := range []string{"kubelet config file " + tc.path + " " + tc.problem + ":", "agent.kubeletConfig.hostPath",
				"agent.kubeletConfig.source=nodeProxy", "/etc/kubernetes/kubelet/config.json", "/home/kubernetes/kubelet-config.yaml",
				"https://github.com/kube-pressure/pressure/blob/main/docs/install.md#managed-nodes"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message lacks %q:\n%s", want, msg)
				}
			}
		})
	}
}
