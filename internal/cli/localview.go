package cli

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/kube-pressure/pressure/internal/source/procfs"
)

// localView are the flags of `snapshot` and `record` that add the agent's own view of the node
// (FileCgroups): run on the node itself, they read its cgroups as pressure-agent does.
type localView struct {
	enabled              bool
	cgroupRoot, procRoot string
}

func (l *localView) addFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&l.enabled, "local", false, "also read the pods cgroup and every pod's cgroup of the node this command runs on, "+
		"with pressure-agent's reader, into "+FileCgroups+" (run it on NODE itself, as root; Linux only)")
	fs.StringVar(&l.cgroupRoot, "cgroup-root", defaultCgroupRoot, "with --local: where the cgroup filesystems are mounted")
	fs.StringVar(&l.procRoot, "proc-root", procfs.DefaultRoot, "with --local: where procfs is mounted (MemTotal, for memory.available)")
}

// sampler returns the reader of the agent's view, or nil without --local.
func (l *localView) sampler() (*cgroupSampler, error) {
	if !l.enabled {
		return nil, nil
	}
	return newCgroupSampler(l.cgroupRoot, l.procRoot)
}

// sampleBuffer holds the reads taken since the last snapshot of a recording.
type sampleBuffer struct {
	mu sync.Mutex
	s  []CgroupSample
}

func (b *sampleBuffer) add(x CgroupSample) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.s = append(b.s, x)
}

// take returns the reads held and empties the buffer.
func (b *sampleBuffer) take() []CgroupSample {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.s
	b.s = nil
	return out
}

// sampleEvery reads the node every interval into buf until stop is closed.
func sampleEvery(s *cgroupSampler, every time.Duration, buf *sampleBuffer, stop <-chan struct{}) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			buf.add(s.sample(now.UTC()))
		}
	}
}

// cgroupMismatch says why the pods cgroup the agent's detector found (driver "cgroupfs", "systemd" or ""
// for none) may not be the one the kubelet configuration kubeletConfig (/configz output or a bare
// KubeletConfiguration) puts its pods in; "" when they agree. pressure-agent finds the pods cgroup the
// same way, so a mismatch affects it too.
func cgroupMismatch(kubeletConfig []byte, driver string) string {
	var kc struct {
		CgroupDriver string `json:"cgroupDriver"`
		CgroupRoot   string `json:"cgroupRoot"`
	}
	var configz struct {
		KubeletConfig *json.RawMessage `json:"kubeletconfig"`
	}
	data := kubeletConfig
	if json.Unmarshal(data, &configz) == nil && configz.KubeletConfig != nil {
		data = *configz.KubeletConfig
	}
	if err := json.Unmarshal(data, &kc); err != nil {
		return ""
	}
	want := kc.CgroupDriver
	if want == "" {
		want = "cgroupfs" // the kubelet's default
	}
	switch {
	case driver == "":
		return "no pods cgroup (kubepods or kubepods.slice) under --cgroup-root: the reads hold no pods"
	case kc.CgroupRoot != "" && kc.CgroupRoot != "/":
		return fmt.Sprintf("the kubelet's cgroupRoot is %q: its pods cgroup is below it, not the %s one read here",
			kc.CgroupRoot, driver)
	case want != driver:
		return fmt.Sprintf("the kubelet's cgroupDriver is %q, but the pods cgroup found is the %s driver's", want, driver)
	}
	return ""
}
