package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kube-pressure/pressure/test/cluster"
)

// Node setup, as test/e2e scenario 1 except the kubelet's memcg notifier: the pods cgroup is limited to
// podsLimit (kubeReserved = MemTotal - podsLimit), the kubelet evicts below kubeletThreshold of
// memory.available and allocatableMemory.available, and the agent acts headroom earlier.
const (
	podsLimit        = 2 << 30
	kubeletThreshold = "200Mi"
	agentHeadroom    = "256Mi" // the agent's default for memory signals (docs/agent-config.md)
)

// bench is the cluster and everything a run needs.
type bench struct {
	dir      string
	cp       *cluster.ControlPlane
	node     *cluster.Node
	client   kubernetes.Interface
	agentBin string
	// crossingAvail is the agent's allocatableMemory.available threshold in bytes.
	crossingAvail int64
}

func run(ctx context.Context, o options) (err error) {
	repo, err := cluster.RepoRoot(".")
	if err != nil {
		return err
	}
	bins, err := cluster.FindBinaries(repo)
	if err != nil {
		return fmt.Errorf("%w; build them with hack/build-k8s.sh", err)
	}
	dir, err := os.MkdirTemp("", "pressure-bench-agent-")
	if err != nil {
		return err
	}
	b := &bench{dir: dir}
	b.crossingAvail = bytesOf(kubeletThreshold) + bytesOf(agentHeadroom)
	b.agentBin = filepath.Join(dir, "pressure-agent")
	logf("building pressure-agent into %s", b.agentBin)
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", b.agentBin, "./cmd/pressure-agent").CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/pressure-agent: %w: %s", err, out)
	}
	defer b.stop()
	if err := b.start(ctx, bins); err != nil {
		return err
	}
	rep := &report{opts: o, started: time.Now().UTC(), dir: dir}
	if err := b.ramps(ctx, o, rep); err != nil {
		rep.err = err
	}
	if rep.err == nil && o.steadyPods > 0 {
		if err := b.steady(ctx, o, rep); err != nil {
			rep.err = err
		}
	}
	rep.finished = time.Now().UTC()
	text := rep.markdown()
	fmt.Print(text)
	if o.out != "" {
		if werr := os.WriteFile(o.out, []byte(text), 0o644); werr != nil {
			logf("write %s: %v", o.out, werr)
		}
	}
	return rep.err
}

func (b *bench) start(ctx context.Context, bins cluster.Binaries) error {
	t0 := time.Now()
	cp, err := cluster.StartControlPlane(ctx, cluster.ControlPlaneOptions{Binaries: bins, Dir: b.dir})
	if err != nil {
		return err
	}
	b.cp = cp
	memTotal, err := memTotalBytes()
	if err != nil {
		return err
	}
	reserved := resource.NewQuantity(memTotal-podsLimit, resource.BinarySI)
	cfg := &kubeletv1beta1.KubeletConfiguration{
		KubeReserved:           map[string]string{"memory": reserved.String()},
		EnforceNodeAllocatable: []string{"pods"},
		// The kubelet's default (false): housekeeping every 10 s, the only mode on cgroup v2.
		KernelMemcgNotification:          false,
		EvictionHard:                     map[string]string{"memory.available": kubeletThreshold, "allocatableMemory.available": kubeletThreshold},
		EvictionPressureTransitionPeriod: metav1.Duration{Duration: 10 * time.Second},
	}
	logf("control plane ready in %s; waiting for the node lock %s", time.Since(t0).Round(time.Millisecond), cluster.NodeLockPath)
	node, err := cluster.StartNode(ctx, cp, cluster.NodeOptions{KubeletConfig: cfg})
	if err != nil {
		return err
	}
	b.node = node
	logf("node %s Ready %s after start (kubelet config %s)", node.Name(), time.Since(t0).Round(time.Millisecond), node.KubeletConfigPath())
	b.client, err = cp.Client()
	return err
}

func (b *bench) stop() {
	if b.node != nil {
		if err := b.node.Stop(); err != nil {
			logf("stop node: %v", err)
		}
	}
	if b.cp != nil {
		if err := b.cp.Stop(); err != nil {
			logf("stop control plane: %v", err)
		}
	}
	logf("cluster stopped; logs in %s", b.dir)
}

// memTotalBytes reads MemTotal from /proc/meminfo.
func memTotalBytes() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("read meminfo: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo: MemTotal %q: %w", fields[1], err)
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("/proc/meminfo: no MemTotal line")
}

func bytesOf(q string) int64 {
	v := resource.MustParse(q)
	return v.Value()
}
