package vm

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/images"
)

// The guest's side of qemu's user-mode network: its address, and the host's loopback as it sees it.
const (
	GuestIP   = "10.0.2.15"
	HostAlias = "10.0.2.2"
)

// Paths in the guest of a node.
const (
	// GuestKubeletConfig is the kubelet's configuration file in the guest (the chart's kubeletConfig.hostPath).
	GuestKubeletConfig = guestNodeDir + "/kubelet-config.yaml"

	guestNodeDir   = "/node"
	guestKubelet   = "/usr/local/bin/kubelet"
	guestAgent     = "/usr/local/bin/pressure-agent"
	guestKubeRoot  = "/var/lib/kubelet"
	guestPodsGroup = "/sys/fs/cgroup/kubepods"
)

// NodeOptions configure StartNode. Zero values mean the defaults.
type NodeOptions struct {
	Name      string // node name; default "pressure-v2"
	Dir       string // host dir for the initramfs, the serial logs and the node's files; required
	MemoryMiB int    // guest RAM; default 3072
	Nice      int    // qemu under nice -n Nice when > 0
	// KubeletConfig is merged onto cluster.DefaultKubeletConfig (eviction settings, reservations).
	KubeletConfig *kubeletv1beta1.KubeletConfiguration
	// Images are imported into the guest's containerd (k8s.io namespace); they must include the pause image.
	Images []images.Image
	// Agent, when set, is a static pressure-agent binary on the host, run in the guest as a plain process
	// (not by the chart) with the admin kubeconfig, the kubelet's configuration file and AgentArgs.
	Agent     string
	AgentArgs []string
	// PodNetwork gives pods a network of their own, as the chart's agent (not hostNetwork) needs: the bridge
	// and veth modules, the host's CNI plugins (bridge, host-local, loopback) and the kubernetes Service
	// address (10.0.0.1:443) forwarded to the API server on the host by the guest init.
	PodNetwork bool
	// Ready bounds the wait for the node to be Ready; default 4m (TCG boots and starts slowly).
	Ready time.Duration
	// CostEvery, when set, runs the guest's cost sampler (guestinit cost) at this period: CPU time and
	// RSS of the kubelet, containerd, the agent and the janitor (Node.Cost).
	CostEvery time.Duration
	// DiskMiB, when > 0, gives the node a scratch disk mounted at GuestDisk (Options.DiskMiB): a hostPath
	// volume there holds files whose page cache is reclaimable (the kubelet's root is tmpfs: shmem).
	DiskMiB int
	// Containerd2, when set, runs that containerd 2 build (static binaries) instead of the host's
	// containerd 1.6, which cannot mount recursively read-only (the chart's agent.reclaim needs it).
	Containerd2 *cluster.Containerd2
	// TailPodLogs copies the logs of each pod container NAMESPACE/CONTAINER onto the output once it
	// exists (the host cannot reach the kubelet's log endpoint): Guest.OutputLines has them.
	TailPodLogs []string
}

// Node is a kubelet on cgroup v2 in a running guest, registered with a control plane on the host.
type Node struct {
	Name   string
	Client kubernetes.Interface
	Guest  *Running
	// Boot is how long it took from qemu's start to the node's Ready condition.
	Boot time.Duration
}

// StartNode boots a guest running containerd (native snapshotter, cgroupfs, runc without pivot_root:
// the guest's root is the initramfs), the control plane's kubelet with cgroupDriver cgroupfs on cgroup
// v2, a sampler of the pods cgroup's memory.current and memory.events on ttyS1 and, when asked, the
// agent; the kubelet reaches the API server on the host through qemu's user-mode network. It waits for
// the node to be Ready. Stop the node with Stop.
func (g Guest) StartNode(ctx context.Context, cp *cluster.ControlPlane, initBin string, opt NodeOptions) (*Node, error) {
	if opt.Name == "" {
		opt.Name = "pressure-v2"
	}
	if opt.MemoryMiB == 0 {
		opt.MemoryMiB = 3072
	}
	if opt.Ready == 0 {
		opt.Ready = 4 * time.Minute
	}
	port, err := cp.APIPort()
	if err != nil {
		return nil, err
	}
	stage := filepath.Join(opt.Dir, "node")
	if err := cp.WriteGuestNodeFiles(stage, cluster.GuestNode{
		Name: opt.Name, IP: net.ParseIP(GuestIP), Server: "https://" + HostAlias + ":" + port, TLSServerName: "localhost",
		Dir: guestNodeDir, KubeletConfig: opt.KubeletConfig,
	}); err != nil {
		return nil, fmt.Errorf("start guest node: %w", err)
	}
	files, err := nodeFiles(g, cp, stage, opt)
	if err != nil {
		return nil, fmt.Errorf("start guest node: %w", err)
	}
	start := time.Now()
	run, err := g.Start(initBin, nodePrograms(opt, port), files, Options{Dir: opt.Dir, MemoryMiB: opt.MemoryMiB, Nice: opt.Nice, Net: true,
		DiskMiB: opt.DiskMiB})
	if err != nil {
		return nil, fmt.Errorf("start guest node: %w", err)
	}
	client, err := cp.Client()
	if err != nil {
		_ = run.Stop()
		return nil, err
	}
	n := &Node{Name: opt.Name, Client: client, Guest: run}
	if err := n.waitReady(ctx, opt.Ready); err != nil {
		_ = n.Stop()
		return nil, fmt.Errorf("start guest node: %w\n%s", err, run.Tail(30))
	}
	n.Boot = time.Since(start)
	return n, nil
}

func (n *Node) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	why := "not registered"
	for {
		if done, err := n.Guest.Exited(); done {
			return fmt.Errorf("%w: qemu ended before the node was Ready: %v", ErrGuest, err)
		}
		if ended := n.Guest.OutputLines(markExited); len(ended) > 0 {
			return fmt.Errorf("%w: a service ended before the node was Ready: %s", ErrGuest, strings.Join(ended, "; "))
		}
		node, err := n.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err == nil {
			why = "no Ready condition"
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady {
					if c.Status == corev1.ConditionTrue {
						return nil
					}
					why = c.Reason + ": " + c.Message
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s not Ready after %s (%s): %w", n.Name, timeout, why, ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
}

// Stop deletes the Node object and stops the guest.
func (n *Node) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = n.Client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{})
	return n.Guest.Stop()
}

// Samples are the sampler's lines so far: "=== pressure-vm sample <uptime> <memory.current of the pods
// cgroup> oom_kill <n> MemAvailable: <kB> kB".
func (n *Node) Samples() []string { return n.Guest.OutputLines(markSample) }

// markSample prefixes the sampler's lines on ttyS1.
const markSample = "=== pressure-vm sample "

// nodeModules are the virtio NIC's modules in load order (the kernel package ships no modules.dep).
var nodeModules = []string{
	"drivers/virtio/virtio_ring.ko", "drivers/virtio/virtio.ko",
	"drivers/virtio/virtio_pci_legacy_dev.ko", "drivers/virtio/virtio_pci_modern_dev.ko",
	"drivers/virtio/virtio_pci.ko", "net/core/failover.ko", "drivers/net/net_failover.ko",
	"drivers/net/virtio_net.ko",
}

// podNetModules are the bridge and veth modules of the pod network, in load order.
var podNetModules = []string{"net/llc/llc.ko", "net/802/stp.ko", "net/bridge/bridge.ko", "drivers/net/veth.ko"}

// cniPlugins are the host's CNI plugins the pod network runs (dynamically linked: packed with libc).
var cniPlugins = []string{"bridge", "host-local", "loopback"}

// ChartNamespace is the namespace the chart's agent is installed in on a guest node (its log goes to ttyS1).
const ChartNamespace = "pressure"

// kubernetesService is the kubernetes Service's address in the control plane's default range.
const kubernetesService = "10.0.0.1"

// modules are the node's kernel modules in load order, less those the disk's set-up loads first
// (NodeOptions.DiskMiB: insmod of a loaded module fails).
func modules(opt NodeOptions) []string {
	var out []string
	for _, m := range append(append([]string{}, nodeModules...), podNetModules...) {
		switch {
		case !opt.PodNetwork && slices.Contains(podNetModules, m):
		case opt.DiskMiB > 0 && slices.Contains(diskModules, m):
		default:
			out = append(out, m)
		}
	}
	return out
}

// hostBinaries are the node's dynamically linked host programs, packed with their libraries.
var hostBinaries = []string{"/usr/bin/containerd", "/usr/bin/containerd-shim-runc-v2", "/usr/bin/ctr", "/usr/sbin/runc"}

func nodeFiles(g Guest, cp *cluster.ControlPlane, stage string, opt NodeOptions) ([]File, error) {
	var files []File
	seen := map[string]bool{}
	add := func(fs ...File) {
		for _, f := range fs {
			if !seen[f.Guest] {
				seen[f.Guest] = true
				files = append(files, f)
			}
		}
	}
	if c := opt.Containerd2; c != nil {
		for _, b := range []string{"containerd", "containerd-shim-runc-v2", "ctr"} {
			add(File{Guest: "/usr/bin/" + b, Host: filepath.Join(c.Dir, b), Mode: 0o755}) // static
		}
	}
	for _, b := range hostBinaries {
		fs, err := WithLibraries(b, b)
		if err != nil {
			return nil, err
		}
		add(fs...) // the first added of a path wins: containerd 2's over the host's
	}
	add(File{Guest: guestKubelet, Host: cp.KubeletPath()})
	if opt.Agent != "" {
		add(File{Guest: guestAgent, Host: opt.Agent})
	}
	mods, err := moduleDir(g)
	if err != nil {
		return nil, err
	}
	for _, m := range modules(opt) {
		add(File{Guest: "/modules/" + filepath.Base(m), Host: filepath.Join(mods, "kernel", m), Mode: 0o644})
	}
	if opt.PodNetwork {
		for _, c := range cniPlugins {
			fs, err := WithLibraries(filepath.Join("/usr/lib/cni", c), "/opt/cni/bin/"+c)
			if err != nil {
				return nil, err
			}
			add(fs...)
		}
	}
	for _, img := range opt.Images {
		add(File{Guest: "/images/" + filepath.Base(img.Tarball), Host: img.Tarball, Mode: 0o644})
	}
	err = filepath.WalkDir(stage, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(stage, p)
		mode := uint32(0o600)
		if rel == "kubelet-config.yaml" {
			mode = 0o644 // the chart's agent (not root) reads it
		}
		add(File{Guest: filepath.Join(guestNodeDir, rel), Host: p, Mode: mode})
		return nil
	})
	if err != nil {
		return nil, err
	}
	add(
		File{Guest: guestNodeDir + "/containerd.toml", Data: []byte(containerdConfig(opt.Containerd2 != nil)), Mode: 0o644},
		File{Guest: "/etc/cni/net.d/10-pressure.conflist", Data: []byte(cniConfig), Mode: 0o644},
		File{Guest: "/etc/resolv.conf", Data: []byte("nameserver 10.0.2.3\n"), Mode: 0o644},
		File{Guest: "/etc/hosts", Data: []byte("127.0.0.1 localhost\n" + GuestIP + " " + opt.Name + "\n"), Mode: 0o644},
		File{Guest: "/etc/passwd", Data: []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n"), Mode: 0o644},
		File{Guest: "/etc/group", Data: []byte("root:x:0:\nnogroup:x:65534:\n"), Mode: 0o644},
		File{Guest: "/etc/machine-id", Data: []byte("5072657373757265766d6e6f64650001\n"), Mode: 0o644},
	)
	return files, nil
}

// moduleDir is lib/modules/<version> of the kernel package unpacked beside the kernel.
func moduleDir(g Guest) (string, error) {
	dirs, err := filepath.Glob(filepath.Join(filepath.Dir(g.Kernel), "linux-image-*", "lib", "modules", "*"))
	if err != nil || len(dirs) == 0 {
		return "", fmt.Errorf("%w: no lib/modules of the kernel package beside %s (hack/install-vm-deps.sh)", ErrMissing, g.Kernel)
	}
	return dirs[0], nil
}

// nodePrograms are the guest's steps: modules, network, tmpfs for the kubelet's and containerd's state
// (a real filesystem size for nodefs and imagefs), containerd, the image imports, the kubelet, the
// sampler and the agent.
func nodePrograms(opt NodeOptions, apiPort string) []Program {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/usr/sbin:/bin"}
	sh := func(name, script string) Program {
		return Program{Name: name, Path: "/bin/sh", Args: []string{"-c", script}, Env: env}
	}
	var ps []Program
	var insmod []string
	for _, m := range modules(opt) {
		insmod = append(insmod, "insmod /modules/"+filepath.Base(m))
	}
	ps = append(ps,
		sh("modules", strings.Join(insmod, " && ")),
		sh("network", "ip link set lo up && ip link set eth0 up && ip addr add "+GuestIP+"/24 dev eth0 && ip route add default via "+HostAlias),
		sh("mounts", "mkdir -p /var/lib /run /opt/cni/bin && mount -t tmpfs -o size=1g tmpfs /var/lib && mount -t tmpfs tmpfs /run"),
	)
	if opt.PodNetwork {
		ps = append(ps, sh("service-address", "ip addr add "+kubernetesService+"/32 dev lo"),
			Program{Name: "api-proxy", Path: "/init", Args: []string{"proxy", kubernetesService + ":443", HostAlias + ":" + apiPort},
				Env: env, Background: true})
	}
	ps = append(ps,
		Program{Name: "containerd", Path: "/usr/bin/containerd", Args: []string{"--config", guestNodeDir + "/containerd.toml", "--log-level", "warn"},
			Env: env, Background: true},
	)
	sock := cluster.ContainerdSocket(guestNodeDir)
	for _, img := range opt.Images {
		ps = append(ps, Program{Name: "import-" + strings.TrimSuffix(filepath.Base(img.Tarball), ".tar"), Path: "/usr/bin/ctr",
			Args: []string{"--address", sock, "-n", "k8s.io", "images", "import", "--snapshotter", "native", "/images/" + filepath.Base(img.Tarball)},
			Env:  env, WaitFor: sock})
	}
	ps = append(ps,
		Program{Name: "kubelet", Path: guestKubelet, Env: env, Background: true, Args: []string{
			"--config=" + guestNodeDir + "/kubelet-config.yaml", "--kubeconfig=" + guestNodeDir + "/kubelet.kubeconfig",
			"--root-dir=" + guestKubeRoot, "--cert-dir=" + guestNodeDir + "/pki", "--hostname-override=" + opt.Name,
			"--node-ip=" + GuestIP, "--v=1"}},
		sh("sampler", `while :; do set -- $(cat /proc/uptime); echo "`+markSample+`$1 $(cat `+guestPodsGroup+`/memory.current 2>/dev/null || echo 0) $(grep oom_kill `+guestPodsGroup+`/memory.events 2>/dev/null || echo oom_kill 0) $(grep MemAvailable /proc/meminfo)"; sleep 1; done`),
	)
	ps[len(ps)-1].Background = true
	ps = append(ps, Program{Name: "avail", Path: "/init", Args: []string{"avail", guestPodsGroup, strconv.Itoa(availBandMiB)},
		Background: true}) // it waits for the pods cgroup itself
	if opt.CostEvery > 0 {
		ps = append(ps, Program{Name: "cost", Path: "/init", Args: []string{"cost", opt.CostEvery.String()}, Background: true})
	}
	tails := opt.TailPodLogs
	if opt.PodNetwork {
		// The chart agent's log on ttyS1 (nothing on the host reaches the kubelet's log endpoint).
		tails = append([]string{ChartNamespace + "/agent"}, tails...)
	}
	for _, nc := range tails {
		ns, c, _ := strings.Cut(nc, "/")
		logs := guestNodeDir + "/pod-logs/" + ns + "_*/" + c + "/*.log"
		name := "log-" + ns + "-" + c
		if ns == ChartNamespace && c == "agent" {
			name = "chart-agent-log"
		}
		ps = append(ps, sh(name, "while ! ls "+logs+" >/dev/null 2>&1; do sleep 1; done; exec tail -F "+logs))
		ps[len(ps)-1].Background = true
	}
	if opt.Agent != "" {
		args := append([]string{"--kubeconfig=" + guestNodeDir + "/admin.kubeconfig", "--node-name=" + opt.Name,
			"--kubelet-config=" + guestNodeDir + "/kubelet-config.yaml"}, opt.AgentArgs...)
		// After the kubelet made the pods cgroup: the agent arms its pods-cgroup notifiers at start.
		ps = append(ps, Program{Name: "agent", Path: guestAgent, Args: args, Env: env, Background: true,
			WaitFor: guestPodsGroup + "/memory.events"})
	}
	return ps
}

// cniConfig makes containerd report the network ready (the kubelet's node Ready needs it). The race's pods
// use the host's network; the plugins are packed only with NodeOptions.PodNetwork (the chart's agent).
const cniConfig = `{"cniVersion": "0.4.0", "name": "pressure", "plugins": [{"type": "bridge", "bridge": "cni0",
  "isGateway": true, "isDefaultGateway": true, "ipMasq": false, "hairpinMode": true,
  "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.213.78.0/24"}]], "dataDir": "/run/cni-ipam"}}]}
`
