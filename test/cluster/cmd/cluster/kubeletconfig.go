package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
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
		total, err := memTotal(f)
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

// memTotal reads MemTotal (bytes) from a /proc/meminfo document.
func memTotal(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("MemTotal %q: %w", f[1], err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no MemTotal line")
}
