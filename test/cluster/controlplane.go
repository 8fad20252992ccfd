package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ControlPlaneOptions configure StartControlPlane. Zero values mean the harness default.
type ControlPlaneOptions struct {
	// Binaries holds etcd and the Kubernetes binaries (required; see FindBinaries).
	Binaries Binaries
	// Dir is the state directory (certificates, kubeconfigs, etcd data, logs). Empty: a new
	// directory under os.TempDir(). Stop does not remove it.
	Dir string
	// TerminatedPodGCThreshold is kube-controller-manager's --terminated-pod-gc-threshold;
	// nil keeps the kube-controller-manager default (12500). <= 0 disables pod GC.
	TerminatedPodGCThreshold *int32
	// ServiceClusterIPRange defaults to 10.0.0.0/24.
	ServiceClusterIPRange string
	// Extra*Args are appended to the harness flags (a later flag wins).
	ExtraAPIServerArgs         []string
	ExtraControllerManagerArgs []string
	ExtraSchedulerArgs         []string
	// StartTimeout bounds the wait for each component; default 90s.
	StartTimeout time.Duration
	// APIServer is the path of a kube-apiserver to run instead of Binaries' (an older release's, for
	// test/chartcompat; hack/build-apiserver.sh builds them). Empty: Binaries'.
	APIServer string
	// Scheduler is the path of a kube-scheduler to run instead of Binaries' (an older release's, for
	// test/avoidwebhook; hack/build-apiserver.sh kube-scheduler builds them). Empty: Binaries'.
	Scheduler string
}

// defaultServiceClusterIPRange is the Service range unless ControlPlaneOptions set one; the
// `kubernetes` Service gets its first address, 10.0.0.1 (in the API server's certificate).
const defaultServiceClusterIPRange = "10.0.0.0/24"

// ControlPlane is a running etcd, kube-apiserver, kube-controller-manager and kube-scheduler.
type ControlPlane struct {
	dir        string
	bins       Binaries
	pki        *controlPlanePKI
	server     string // https://127.0.0.1:<port>
	kubeconfig string
	timeout    time.Duration
	// serviceRange is --service-cluster-ip-range as given ("" means the default).
	serviceRange string

	apiserverArgs []string
	apiserverBin  string

	mu        sync.Mutex
	etcd      *Process
	apiserver *Process
	cm        *Process
	scheduler *Process
}

// StartControlPlane starts the four components and waits until the API is ready: /readyz ok
// and the default namespace and its default ServiceAccount exist. On error everything
// started is stopped again.
func StartControlPlane(ctx context.Context, opts ControlPlaneOptions) (_ *ControlPlane, err error) {
	if m := opts.Binaries.Missing(); len(m) > 0 {
		return nil, fmt.Errorf("start control plane: binaries %v missing in %q", m, opts.Binaries.Dir)
	}
	began := time.Now()
	cp := &ControlPlane{bins: opts.Binaries, timeout: opts.StartTimeout, dir: opts.Dir, serviceRange: opts.ServiceClusterIPRange,
		apiserverBin: opts.Binaries.Path("kube-apiserver")}
	if opts.APIServer != "" {
		cp.apiserverBin = opts.APIServer
	}
	if cp.timeout == 0 {
		cp.timeout = 90 * time.Second
	}
	if cp.dir == "" {
		if cp.dir, err = os.MkdirTemp("", "pressure-cluster-"); err != nil {
			return nil, fmt.Errorf("start control plane: %w", err)
		}
	}
	if cp.dir, err = filepath.Abs(cp.dir); err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(cp.dir, "etcd"), 0o700); err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	defer func() {
		if err != nil {
			_ = cp.Stop()
		}
	}()
	if cp.pki, err = newControlPlanePKI(filepath.Join(cp.dir, "pki")); err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	start := func(ports []int) error { return cp.startOnPorts(ctx, ports, opts) }
	reset := func() error {
		if err := cp.Stop(); err != nil {
			return err
		}
		cp.etcd, cp.apiserver, cp.cm, cp.scheduler = nil, nil, nil, nil
		// etcd's data dir remembers its member's peer URL: start the next etcd afresh.
		if err := os.RemoveAll(filepath.Join(cp.dir, "etcd")); err != nil {
			return err
		}
		return os.MkdirAll(filepath.Join(cp.dir, "etcd"), 0o700)
	}
	if err := onFreePorts(5, portAttempts, start, reset); err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	if err := cp.waitDefaultServiceAccount(ctx); err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	if err := cp.writeState(); err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	reportWait("control plane start", time.Since(began))
	return cp, nil
}

// startOnPorts writes the kubeconfigs for the API server's port and starts etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler on ports (etcd client, etcd peer, API server,
// controller manager, scheduler).
func (cp *ControlPlane) startOnPorts(ctx context.Context, ports []int, opts ControlPlaneOptions) error {
	etcdClient, etcdPeer, apiPort, cmPort, schedPort := ports[0], ports[1], ports[2], ports[3], ports[4]
	cp.server = "https://127.0.0.1:" + strconv.Itoa(apiPort)
	if err := cp.writeKubeconfigs(); err != nil {
		return err
	}
	if err := cp.startEtcd(ctx, etcdClient, etcdPeer); err != nil {
		return err
	}
	cp.apiserverArgs = cp.apiserverFlags(apiPort, etcdClient, opts)
	if err := cp.StartAPIServer(ctx); err != nil {
		return err
	}
	if err := cp.startControllerManager(ctx, cmPort, opts); err != nil {
		return err
	}
	return cp.startScheduler(ctx, schedPort, opts)
}

// writeState records the running processes in <dir>/state.json, so a control plane leaked by a
// killed test can be stopped with `hack/cluster.sh down --state <dir>`.
func (cp *ControlPlane) writeState() error {
	var ps []*Process
	for _, p := range []*Process{cp.etcd, cp.apiserver, cp.cm, cp.scheduler} {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return WriteState(StatePath(cp.dir), State{Dir: cp.dir, Kubeconfig: cp.kubeconfig, Server: cp.server, Processes: ps})
}

// Dir is the state directory.
func (cp *ControlPlane) Dir() string { return cp.dir }

// Server is the apiserver URL, https://127.0.0.1:<port>.
func (cp *ControlPlane) Server() string { return cp.server }

// Kubeconfig is the path of a kubeconfig for a cluster admin (client certificate in
// group system:masters).
func (cp *ControlPlane) Kubeconfig() string { return cp.kubeconfig }

// CAFile is the cluster CA certificate (it signs the apiserver's and all client certificates).
func (cp *ControlPlane) CAFile() string { return cp.pki.ca.certFile }

// RESTConfig returns a new admin client config.
func (cp *ControlPlane) RESTConfig() *rest.Config {
	return restConfig(cp.server, cp.pki.ca.certPEM, credentials{certPEM: cp.pki.admin.certPEM, keyPEM: cp.pki.admin.keyPEM})
}

// Client returns an admin clientset.
func (cp *ControlPlane) Client() (kubernetes.Interface, error) {
	c, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return nil, fmt.Errorf("admin client: %w", err)
	}
	return c, nil
}

// Processes lists the running components in start order.
func (cp *ControlPlane) Processes() []*Process {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	var ps []*Process
	for _, p := range []*Process{cp.etcd, cp.apiserver, cp.cm, cp.scheduler} {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// Stop stops the scheduler, the controller manager, the apiserver and etcd, in that order,
// each by PID. The state directory stays.
func (cp *ControlPlane) Stop() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	err := stopAll(cp.scheduler, cp.cm, cp.apiserver, cp.etcd)
	if err != nil {
		return fmt.Errorf("stop control plane: %w", err)
	}
	return nil
}

// apiserverOutageGrace is how long StopAPIServer waits after SIGTERM before SIGKILL. While the
// controller manager and scheduler hold watches open, kube-apiserver's HTTP server waits 60s
// for them after it stopped listening; an outage test needs the API gone, not a clean exit.
const apiserverOutageGrace = 2 * time.Second

// StopAPIServer stops kube-apiserver only (for API outage tests): SIGTERM, then SIGKILL after
// 2s. StartAPIServer brings it back on the same port with the same flags.
func (cp *ControlPlane) StopAPIServer() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if err := cp.apiserver.Stop(apiserverOutageGrace); err != nil {
		return fmt.Errorf("stop kube-apiserver: %w", err)
	}
	return nil
}

// StartAPIServer starts kube-apiserver (again) and waits for /readyz. It is a no-op while the
// apiserver runs.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.apiserver.Alive() {
		return nil
	}
	p, err := startProcess("kube-apiserver", filepath.Join(cp.dir, "kube-apiserver.log"),
		append([]string{cp.apiserverBin}, cp.apiserverArgs...), nil)
	if err != nil {
		return err
	}
	cp.apiserver = p
	if cp.cm != nil { // a restart: record the new PID
		if err := cp.writeState(); err != nil {
			return err
		}
	}
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	return p.waitReady(ctx, cp.timeout, func(ctx context.Context) error {
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("GET /readyz: %w: %s", err, body)
		}
		return nil
	})
}

func (cp *ControlPlane) startEtcd(ctx context.Context, clientPort, peerPort int) error {
	clientURL := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	args := []string{
		cp.bins.Path("etcd"),
		"--name=pressure",
		"--data-dir=" + filepath.Join(cp.dir, "etcd"),
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=pressure=" + peerURL,
		"--unsafe-no-fsync=true", // test data; fsync on a shared disk only slows every write
		"--log-level=warn",
	}
	p, err := startProcess("etcd", filepath.Join(cp.dir, "etcd.log"), args, nil)
	if err != nil {
		return err
	}
	cp.etcd = p
	return p.waitReady(ctx, cp.timeout, func(ctx context.Context) error {
		return httpOK(ctx, nil, clientURL+"/health")
	})
}

func (cp *ControlPlane) apiserverFlags(port, etcdPort int, opts ControlPlaneOptions) []string {
	pki := cp.pki
	svcRange := opts.ServiceClusterIPRange
	if svcRange == "" {
		svcRange = defaultServiceClusterIPRange
	}
	args := []string{
		"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(etcdPort),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// No endpoint reconciler: kube-apiserver v1.37 refuses a loopback advertise address with the
		// lease reconciler ("may not be in the loopback range"). Pods reach the API server through
		// APIRoute's DNAT of the kubernetes Service IP, not through the Service's endpoints.
		"--endpoint-reconciler-type=none",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + pki.apiserver.certFile,
		"--tls-private-key-file=" + pki.apiserver.keyFile,
		"--client-ca-file=" + pki.ca.certFile,
		"--authorization-mode=Node,RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pki.saPub,
		"--service-account-signing-key-file=" + pki.saKey,
		"--service-cluster-ip-range=" + svcRange,
		"--kubelet-client-certificate=" + pki.kubeletClient.certFile,
		"--kubelet-client-key=" + pki.kubeletClient.keyFile,
		"--kubelet-certificate-authority=" + pki.ca.certFile,
		"--kubelet-preferred-address-types=InternalIP",
		"--requestheader-client-ca-file=" + pki.frontProxyCA.certFile,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + pki.frontProxyClient.certFile,
		"--proxy-client-key-file=" + pki.frontProxyClient.keyFile,
		"--allow-privileged=true",
		"--profiling=false",
		"--v=1",
	}
	return append(args, opts.ExtraAPIServerArgs...)
}

func (cp *ControlPlane) startControllerManager(ctx context.Context, port int, opts ControlPlaneOptions) error {
	kc := filepath.Join(cp.dir, "kube-controller-manager.kubeconfig")
	args := []string{
		cp.bins.Path("kube-controller-manager"),
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(cp.dir, "pki", "kube-controller-manager"),
		"--service-account-private-key-file=" + cp.pki.saKey,
		"--root-ca-file=" + cp.pki.ca.certFile,
		"--use-service-account-credentials=true",
		"--cluster-signing-cert-file=" + cp.pki.ca.certFile,
		"--cluster-signing-key-file=" + cp.pki.ca.keyFile,
		"--leader-elect=false",
		"--profiling=false",
		"--v=1",
	}
	if opts.TerminatedPodGCThreshold != nil {
		args = append(args, "--terminated-pod-gc-threshold="+strconv.Itoa(int(*opts.TerminatedPodGCThreshold)))
	}
	args = append(args, opts.ExtraControllerManagerArgs...)
	p, err := startProcess("kube-controller-manager", filepath.Join(cp.dir, "kube-controller-manager.log"), args, nil)
	if err != nil {
		return err
	}
	cp.cm = p
	return p.waitReady(ctx, cp.timeout, func(ctx context.Context) error {
		return httpOK(ctx, cp.pki, "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz")
	})
}

func (cp *ControlPlane) startScheduler(ctx context.Context, port int, opts ControlPlaneOptions) error {
	kc := filepath.Join(cp.dir, "kube-scheduler.kubeconfig")
	bin := cp.bins.Path("kube-scheduler")
	if opts.Scheduler != "" {
		bin = opts.Scheduler
	}
	args := []string{
		bin,
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(cp.dir, "pki", "kube-scheduler"),
		"--leader-elect=false",
		"--profiling=false",
		"--v=1",
	}
	args = append(args, opts.ExtraSchedulerArgs...)
	p, err := startProcess("kube-scheduler", filepath.Join(cp.dir, "kube-scheduler.log"), args, nil)
	if err != nil {
		return err
	}
	cp.scheduler = p
	return p.waitReady(ctx, cp.timeout, func(ctx context.Context) error {
		return httpOK(ctx, cp.pki, "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz")
	})
}

// waitDefaultServiceAccount waits for namespace default and its ServiceAccount default (made by
// the controller manager), the last step of "ready".
func (cp *ControlPlane) waitDefaultServiceAccount(ctx context.Context) error {
	client, err := cp.Client()
	if err != nil {
		return err
	}
	return cp.cm.waitReady(ctx, cp.timeout, func(ctx context.Context) error {
		if _, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return fmt.Errorf("namespace default: %w", err)
		}
		if _, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return fmt.Errorf("serviceaccount default/default: %w", err)
		}
		return nil
	})
}
