// Command kubelet-eviction-oracle drives the unmodified kubelet eviction manager
// (k8s.io/kubernetes/pkg/kubelet/eviction) through its exported API on recorded inputs, for the
// differential test in test/differential.
//
// One source, one build per release: built here (module test/tools) it links the pinned v1.37.2;
// test/tools/oracle/v1.MINOR are one module per other release (v1.34.4, v1.35.4, v1.36.3) whose .go
// files are symlinks to these. The API differences are in build-tagged adapters (tags oracle_k134,
// oracle_k135, oracle_k136): compat_start_k134.go (Start without a context in 1.34),
// compat_admit_k134.go (PodAdmitAttributes without Operation in 1.34 and 1.35) and
// compat_admit_k136.go (Admit without a context in 1.36; the untagged compat_admit.go is 1.37's,
// with one). gates.go applies the configuration's featureGates as the kubelet does.
//
// It reads a stream of JSON Cases on stdin and writes one JSON Result per case, in order, on stdout.
// Every case gets a fresh manager; the managers of earlier cases stay parked. See driver.go for how the
// manager's unexported synchronize is driven one step at a time through Start and a fake clock.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/eviction"
	"k8s.io/kubernetes/pkg/kubelet/kubeletconfig/configfiles"
	utilfs "k8s.io/kubernetes/pkg/util/filesystem"
)

func main() {
	verbose := flag.Bool("v", false, "let the eviction manager log to stderr")
	flag.Parse()
	if !*verbose {
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("alsologtostderr", "false")
		_ = fs.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	}
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kubelet-eviction-oracle:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	dec := json.NewDecoder(in)
	dec.DisallowUnknownFields()
	enc := json.NewEncoder(out)
	for {
		var c Case
		if err := dec.Decode(&c); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("decode case: %w", err)
		}
		res, err := runCase(&c)
		if err != nil {
			return fmt.Errorf("case %q: %w", c.Name, err)
		}
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
}

// loadConfig loads the case's KubeletConfiguration with the kubelet's own file loader (decoding,
// conversion and defaulting of the kubelet's scheme), then applies the evictionHard defaulting and
// merging that cmd/kubelet/app/server.go loadConfigFile performs (unexported there).
func loadConfig(raw []byte) (*config.KubeletConfiguration, error) {
	dir, err := os.MkdirTemp("", "eviction-oracle-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "kubelet.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return nil, err
	}
	loader, err := configfiles.NewFsLoader(&utilfs.DefaultFs{}, path)
	if err != nil {
		return nil, err
	}
	kc, err := loader.Load(context.Background())
	if err != nil {
		return nil, err
	}
	if kc.EvictionHard == nil {
		kc.EvictionHard = map[string]string{}
		for k, v := range eviction.DefaultEvictionHard {
			kc.EvictionHard[k] = v
		}
	} else if kc.MergeDefaultEvictionSettings {
		for k, v := range eviction.DefaultEvictionHard {
			if _, ok := kc.EvictionHard[k]; !ok {
				kc.EvictionHard[k] = v
			}
		}
	}
	return kc, nil
}

// evictionConfig builds the manager's Config as pkg/kubelet/kubelet.go NewMainKubelet does.
func evictionConfig(kc *config.KubeletConfiguration, ignoreEviction bool) (eviction.Config, error) {
	enforce := kc.EnforceNodeAllocatable
	if ignoreEviction {
		enforce = []string{}
	}
	thresholds, err := eviction.ParseThresholdConfig(enforce, kc.EvictionHard, kc.EvictionSoft,
		kc.EvictionSoftGracePeriod, kc.EvictionMinimumReclaim)
	if err != nil {
		return eviction.Config{}, err
	}
	return eviction.Config{
		PressureTransitionPeriod: kc.EvictionPressureTransitionPeriod.Duration,
		MaxPodGracePeriodSeconds: int64(kc.EvictionMaxPodGracePeriod),
		Thresholds:               thresholds,
		// The memcg notifier would open real cgroup files; it only adds extra synchronize calls.
		KernelMemcgNotification: false,
		PodCgroupRoot:           "/kubepods",
	}, nil
}
