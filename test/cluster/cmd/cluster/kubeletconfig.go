package main

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/api/resource"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/kube-pressure/pressure/test/cluster"
)

// kubeletConfig builds the KubeletConfiguration merged onto the harness defaults from the
// --kubelet-config file (YAML or JSON, may be "") and --pods-memory (kubeReserved memory =
// MemTotal - podsMemory, so the pods cgroup limit is podsMemory; may be ""). Nil when neither
// is given.
func kubeletConfig(path, podsMemory string) (*kubeletv1beta1.KubeletConfiguration, error) {
	if path == "" && podsMemory == "" {
		return nil, nil
	}
	kc := &kubeletv1beta1.KubeletConfiguration{}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("--kubelet-config: %w", err)
		}
		if err := yaml.UnmarshalStrict(data, kc); err != nil {
			return nil, fmt.Errorf("--kubelet-config %s: %w", path, err)
		}
	}
	if podsMemory != "" {
		q, err := resource.ParseQuantity(podsMemory)
		if err != nil {
			return nil, fmt.Errorf("--pods-memory %q: %w", podsMemory, err)
		}
		f, err := os.Open("/proc/meminfo")
		if err != nil {
			return nil, err
		}
		defer f.Close()
		total, err := cluster.MemTotal(f)
		if err != nil {
			return nil, fmt.Errorf("/proc/meminfo: %w", err)
		}
		if q.Value() <= 0 || q.Value() >= total {
			return nil, fmt.Errorf("--pods-memory %s: want between 0 and MemTotal %d bytes", podsMemory, total)
		}
		if kc.KubeReserved == nil {
			kc.KubeReserved = map[string]string{}
		}
		kc.KubeReserved["memory"] = resource.NewQuantity(total-q.Value(), resource.BinarySI).String()
	}
	return kc, nil
}
