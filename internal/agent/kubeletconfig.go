package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"k8s.io/client-go/kubernetes"

	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// loadKubeletFile reads the node's KubeletConfiguration from a file and parses its eviction settings.
func loadKubeletFile(path string) (threshold.Config, error) {
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

// fetchConfigz reads the kubelet's effective configuration through the API server's node proxy.
func fetchConfigz(ctx context.Context, client kubernetes.Interface, node string) (threshold.Config, error) {
	raw, err := client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", "configz").DoRaw(ctx)
	if err != nil {
		return threshold.Config{}, fmt.Errorf("kubelet config: get /api/v1/nodes/%s/proxy/configz: %w", node, err)
	}
	name := "/api/v1/nodes/" + node + "/proxy/configz"
	kc, err := kubeconv.LoadKubeletConfig(bytes.NewReader(raw), name)
	if err != nil {
		return threshold.Config{}, err
	}
	return parseKubelet(kc, name)
}

func parseKubelet(kc kubeconv.KubeletConfig, name string) (threshold.Config, error) {
	cfg, err := threshold.ParseConfig(kc.ThresholdInput())
	if err != nil {
		return threshold.Config{}, fmt.Errorf("kubelet config %s: %w", name, err)
	}
	return cfg, nil
}
