package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kube-pressure/pressure/test/chartinstall"
	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/images"
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
	dir    string
	repo   string
	cp     *cluster.ControlPlane
	node   *cluster.Node
	client kubernetes.Interface
	// agent is the chart's agent pod while it is on the node (agentOn), else nil.
	agent *chartinstall.Agent
	// values are the chart values set beside the defaults: the node's (chartinstall.NodeValues).
	values []string
	// installed names the contender whose values the release holds ("D": the install's).
	installed string
	helm      chartinstall.Helm
	// auditLog is the API server's audit log of eviction requests (audit.go).
	auditLog string
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
	b := &bench{dir: dir, repo: repo}
	b.crossingAvail = bytesOf(kubeletThreshold) + bytesOf(agentHeadroom)
	defer b.stop()
	if err := b.start(ctx, bins); err != nil {
		return err
	}
	rep := &report{opts: o, started: time.Now().UTC(), dir: dir, values: b.values}
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

// start builds the test images and the agent's image, brings up the cluster with them and installs
// the chart.
func (b *bench) start(ctx context.Context, bins cluster.Binaries) error {
	t0 := time.Now()
	imgs, err := images.BuildAll(ctx, filepath.Join(cluster.CacheDir(), "images"))
	if err != nil {
		return fmt.Errorf("test images: %w", err)
	}
	agentImg, err := chartinstall.DaemonImages(ctx, b.repo, b.dir, imageTag, chartinstall.AgentComponent, chartinstall.JanitorComponent)
	if err != nil {
		return err
	}
	h, err := chartinstall.FindHelm(ctx, b.repo, filepath.Join(b.dir, "helm"))
	if err != nil {
		return err
	}
	logf("images and helm ready in %s", time.Since(t0).Round(time.Millisecond))
	audit, auditLog, err := auditArgs(b.dir)
	if err != nil {
		return err
	}
	b.auditLog = auditLog
	cp, err := cluster.StartControlPlane(ctx, cluster.ControlPlaneOptions{Binaries: bins, Dir: b.dir, ExtraAPIServerArgs: audit})
	if err != nil {
		return err
	}
	b.cp = cp
	cfg, err := kubeletConfig()
	if err != nil {
		return err
	}
	logf("control plane ready in %s; waiting for the node lock %s", time.Since(t0).Round(time.Millisecond), cluster.NodeLockPath)
	node, err := cluster.StartNode(ctx, cp, cluster.NodeOptions{KubeletConfig: cfg, Images: append(imgs, agentImg...)})
	if err != nil {
		return err
	}
	b.node = node
	logf("node %s Ready %s after start (kubelet config %s)", node.Name(), time.Since(t0).Round(time.Millisecond), node.KubeletConfigPath())
	if b.client, err = cp.Client(); err != nil {
		return err
	}
	d, _ := contenderByName("D")
	return b.install(ctx, h, d)
}

// install installs the chart with what the node needs (chartinstall.NodeValues) and nothing else: the
// chart's defaults, the janitor included (contender D). Other contenders add their values when they are
// placed (agentOn). It waits for the agent pod.
func (b *bench) install(ctx context.Context, h chartinstall.Helm, first contender) error {
	b.helm = h
	rel := b.release()
	values := chartinstall.NodeValues(b.node, imageTag)
	b.values = values
	t0 := time.Now()
	if out, err := rel.Install(ctx, values...); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	b.installed = "D"
	a, err := b.agentOn(ctx, first)
	if err != nil {
		return err
	}
	logf("chart installed (--set %s), agent pod %s Ready %s after helm install started", strings.Join(values, " --set "),
		a.Pod.Name, time.Since(t0).Round(time.Millisecond))
	return nil
}

// release is the chart's release on the bench cluster.
func (b *bench) release() chartinstall.Release {
	return chartinstall.Release{Helm: b.helm, Chart: chartinstall.ChartDir(b.repo), Name: release, Namespace: releaseNS,
		Kubeconfig: b.cp.Kubeconfig()}
}

// kubeletConfig is the node of e2e scenario 1 except the kubelet's memcg notifier.
func kubeletConfig() (*kubeletv1beta1.KubeletConfiguration, error) {
	memTotal, err := memTotalBytes()
	if err != nil {
		return nil, err
	}
	reserved := resource.NewQuantity(memTotal-podsLimit, resource.BinarySI)
	return &kubeletv1beta1.KubeletConfiguration{
		KubeReserved:           map[string]string{"memory": reserved.String()},
		EnforceNodeAllocatable: []string{"pods"},
		// The kubelet's default (false): housekeeping every 10 s, the only mode on cgroup v2.
		KernelMemcgNotification:          false,
		EvictionHard:                     map[string]string{"memory.available": kubeletThreshold, "allocatableMemory.available": kubeletThreshold},
		EvictionPressureTransitionPeriod: metav1.Duration{Duration: 10 * time.Second},
	}, nil
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
