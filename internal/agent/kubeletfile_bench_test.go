package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// uncachedKubeletFile is the file load before kubeletFile (commit 50754d3): open, read and parse every
// time.
func uncachedKubeletFile(path string) (threshold.Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return threshold.Config{}, fmt.Errorf("kubelet config: %w", err)
	}
	defer f.Close()
	kc, err := kubeconv.LoadKubeletConfig(f, path)
	if err != nil {
		return threshold.Config{}, err
	}
	return parseKubelet(kc, path)
}

// BenchmarkKubeletRefreshUnchanged is one refresh of an unchanged kubelet config file (kubeadm's shape,
// 0.4 KiB), as the refresher does it every KubeletConfigRefresh.
func BenchmarkKubeletRefreshUnchanged(b *testing.B) {
	path := filepath.Join(b.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(kubeletYAML("200Mi")), 0o600); err != nil {
		b.Fatal(err)
	}
	load := refreshLoad(path)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := load(); err != nil {
			b.Fatal(err)
		}
	}
}

// refreshLoad is what the refresher calls for a file.
func refreshLoad(path string) func() (threshold.Config, error) {
	return (&kubeletFile{Path: path}).Load
}
