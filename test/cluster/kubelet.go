package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// podsCgroupName is the kubelet's pods cgroup with cgroupfs and cgroupRoot "/".
const podsCgroupName = "kubepods"

// DefaultKubeletConfig is the harness base configuration for a node serving on ip: cgroup v1
// allowed, cgroupfs, QoS cgroups, pods allocatable enforced, oomScoreAdj 0 and no
// swap or iptables requirements (see real-cluster-notes.md), x509 + webhook auth with the
// cluster CA, logs and paths inside dir. Eviction settings are left to the test (kubelet
// defaults when unset).
func DefaultKubeletConfig(dir string, ip net.IP, caFile string) *kubeletv1beta1.KubeletConfiguration {
	return &kubeletv1beta1.KubeletConfiguration{
		TypeMeta:               metav1.TypeMeta{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration"},
		FailCgroupV1:           ptr.To(false),
		CgroupDriver:           "cgroupfs",
		CgroupsPerQOS:          ptr.To(true),
		EnforceNodeAllocatable: []string{"pods"},
		OOMScoreAdj:            ptr.To[int32](0),
		FailSwapOn:             ptr.To(false),
		MakeIPTablesUtilChains: ptr.To(false),
		Address:                ip.String(),
		Port:                   10250,
		ReadOnlyPort:           0,
		HealthzBindAddress:     "127.0.0.1",
		HealthzPort:            ptr.To[int32](10248),
		TLSCertFile:            filepath.Join(dir, "pki", "kubelet-serving.crt"),
		TLSPrivateKeyFile:      filepath.Join(dir, "pki", "kubelet-serving.key"),
		Authentication: kubeletv1beta1.KubeletAuthentication{
			X509:      kubeletv1beta1.KubeletX509Authentication{ClientCAFile: caFile},
			Webhook:   kubeletv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(true)},
			Anonymous: kubeletv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)},
		},
		Authorization:                    kubeletv1beta1.KubeletAuthorization{Mode: kubeletv1beta1.KubeletAuthorizationModeWebhook},
		ContainerRuntimeEndpoint:         "unix://" + containerdSocket(dir),
		PodLogsDir:                       filepath.Join(dir, "pod-logs"),
		ClusterDomain:                    "cluster.local",
		EvictionPressureTransitionPeriod: metav1.Duration{Duration: 30 * time.Second},
		SerializeImagePulls:              ptr.To(false),
		ResolverConfig:                   ptr.To("/etc/resolv.conf"),
		NodeStatusUpdateFrequency:        metav1.Duration{Duration: 5 * time.Second},
		RotateCertificates:               false,
		ProtectKernelDefaults:            false,
		CgroupRoot:                       "/",
	}
}

// MergeKubeletConfig returns base with every field override sets (non-empty in JSON) replaced;
// JSON objects (authentication, evictionHard, ...) merge key by key, so an override cannot
// remove a base key; zero durations in override are ignored. The result is YAML.
func MergeKubeletConfig(base, override *kubeletv1beta1.KubeletConfiguration) ([]byte, error) {
	b, err := toMap(base)
	if err != nil {
		return nil, err
	}
	if override != nil {
		o, err := toMap(override)
		if err != nil {
			return nil, err
		}
		mergeMaps(b, o)
	}
	out, err := yaml.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encode kubelet config: %w", err)
	}
	return out, nil
}

func toMap(c *kubeletv1beta1.KubeletConfiguration) (map[string]any, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode kubelet config: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode kubelet config: %w", err)
	}
	return m, nil
}

// mergeMaps copies the non-empty values of src into dst, recursing into objects. A zero
// duration ("0s": metav1.Duration has no omitempty) counts as empty; the kubelet treats it as
// "use the default" anyway.
func mergeMaps(dst, src map[string]any) {
	for k, v := range src {
		switch v := v.(type) {
		case nil:
			continue
		case string:
			if v == "" || v == "0s" {
				continue
			}
		case map[string]any:
			if d, ok := dst[k].(map[string]any); ok {
				mergeMaps(d, v)
				continue
			}
			if len(v) == 0 {
				continue
			}
		}
		dst[k] = v
	}
}

// writeKubeletFiles writes the kubelet's certificates (client CN=system:node:<name> and serving
// for ip, both from the cluster CA), kubeconfig and merged configuration; it returns the
// configuration path.
func writeKubeletFiles(cp *ControlPlane, opts NodeOptions, ip net.IP) (string, error) {
	pkiDir := filepath.Join(opts.Dir, "pki")
	if err := os.MkdirAll(pkiDir, 0o700); err != nil {
		return "", fmt.Errorf("kubelet pki dir: %w", err)
	}
	client, err := cp.pki.ca.issue(pkiDir, "kubelet-client", certSpec{
		commonName: "system:node:" + opts.Name, organization: []string{"system:nodes"}, client: true})
	if err != nil {
		return "", err
	}
	if _, err := cp.pki.ca.issue(pkiDir, "kubelet-serving", certSpec{
		commonName: opts.Name, ips: []net.IP{ip}, dnsNames: []string{opts.Name}, server: true}); err != nil {
		return "", err
	}
	if err := writeKubeconfig(filepath.Join(opts.Dir, "kubelet.kubeconfig"), cp.server, cp.pki.ca.certPEM,
		"system:node:"+opts.Name, credentials{certPEM: client.certPEM, keyPEM: client.keyPEM}); err != nil {
		return "", err
	}
	base := DefaultKubeletConfig(opts.Dir, ip, cp.CAFile())
	if opts.ContainerdRootFS == nil {
		// The images live on the host's disk, whose fill level is the machine's, not the test's: at the
		// kubelet's default 85% its image GC deleted the test images mid-run (the host's disk had 30 of
		// 252 GiB available). 100 turns image GC off; a node with its own imagefs keeps the default.
		base.ImageGCHighThresholdPercent = ptr.To[int32](100)
	}
	cfg, err := MergeKubeletConfig(base, opts.KubeletConfig)
	if err != nil {
		return "", err
	}
	path := filepath.Join(opts.Dir, "kubelet-config.yaml")
	if err := os.WriteFile(path, cfg, 0o644); err != nil {
		return "", fmt.Errorf("write kubelet config: %w", err)
	}
	return path, nil
}

// kubeletRun is what starting the node's kubelet needs, kept in Node for a restart.
type kubeletRun struct {
	argv      []string
	name, dir string // the node name; the node dir, which holds kubelet.log
	healthz   string // the kubelet's healthz URL; "" when its configuration turns healthz off
}

// kubeletCommand is how to run the kubelet for the node opts describes, serving on ip with the merged
// configuration file config.
func kubeletCommand(cp *ControlPlane, opts NodeOptions, ip net.IP, config string) (kubeletRun, error) {
	healthz, err := kubeletHealthzURL(config)
	if err != nil {
		return kubeletRun{}, err
	}
	return kubeletRun{name: opts.Name, dir: opts.Dir, healthz: healthz, argv: []string{
		cp.bins.Path("kubelet"),
		"--config=" + config,
		"--kubeconfig=" + filepath.Join(opts.Dir, "kubelet.kubeconfig"),
		"--root-dir=" + filepath.Join(opts.Dir, "kubelet"),
		"--cert-dir=" + filepath.Join(opts.Dir, "pki"),
		"--hostname-override=" + opts.Name,
		"--node-ip=" + ip.String(),
		"--v=2",
	}}, nil
}

// kubeletHealthzURL reads the healthz address and port from the kubelet configuration file at path.
func kubeletHealthzURL(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read kubelet config: %w", err)
	}
	var cfg kubeletv1beta1.KubeletConfiguration
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return "", fmt.Errorf("decode kubelet config %s: %w", path, err)
	}
	port := ptr.Deref(cfg.HealthzPort, 10248)
	if port == 0 {
		return "", nil
	}
	return "http://" + net.JoinHostPort(cmp.Or(cfg.HealthzBindAddress, "127.0.0.1"), strconv.Itoa(int(port))) + "/healthz", nil
}

// startKubelet starts the kubelet as run says (log <dir>/kubelet.log, appended; the node lock
// inherited) and waits until its healthz answers and the node is Ready by a heartbeat of this kubelet.
func startKubelet(ctx context.Context, cp *ControlPlane, run kubeletRun, lock *os.File, timeout time.Duration) (*Process, error) {
	client, err := cp.Client()
	if err != nil {
		return nil, err
	}
	began := time.Now()
	p, err := startProcess("kubelet", filepath.Join(run.dir, "kubelet.log"), run.argv, nil, lock)
	if err != nil {
		return nil, err
	}
	err = p.waitReady(ctx, timeout, func(ctx context.Context) error {
		if run.healthz != "" {
			if err := httpOK(ctx, nil, run.healthz); err != nil {
				return err
			}
		}
		node, err := client.CoreV1().Nodes().Get(ctx, run.name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("node %s: %w", run.name, err)
		}
		return kubeletReady(node, began)
	})
	return p, err
}

// kubeletReady says whether node is Ready by a heartbeat at or after began (to the second, the API's
// resolution): after a restart the old kubelet's Ready condition stays True for a while, and only a
// fresh heartbeat shows that the new kubelet runs and reported the node.
func kubeletReady(node *corev1.Node, began time.Time) error {
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status != corev1.ConditionTrue {
			return fmt.Errorf("node %s not Ready: %s: %s", node.Name, c.Reason, c.Message)
		}
		if c.LastHeartbeatTime.Time.Before(began.Truncate(time.Second)) {
			return fmt.Errorf("node %s Ready, but its last heartbeat %s is older than the kubelet (started %s)",
				node.Name, c.LastHeartbeatTime.UTC().Format(time.RFC3339), began.UTC().Format(time.RFC3339))
		}
		return nil
	}
	return fmt.Errorf("node %s has no Ready condition yet", node.Name)
}
