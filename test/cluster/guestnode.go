package cluster

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// GuestNode describes a kubelet that runs outside this host's network namespace (the cgroup v2 guest of
// test/vm) and joins the control plane through a forwarded address.
type GuestNode struct {
	Name string
	// IP is the address the guest's kubelet serves on (its serving certificate's IP SAN).
	IP net.IP
	// Server is the API server's URL as the guest reaches it (e.g. https://10.0.2.2:<port>); the API
	// server's certificate is checked against TLSServerName (e.g. "localhost"), one of its names.
	Server, TLSServerName string
	// Dir is the node directory inside the guest: every path in the files written refers to it.
	Dir string
	// KubeletConfig is merged onto DefaultKubeletConfig(Dir, IP, Dir/pki/ca.crt).
	KubeletConfig *kubeletv1beta1.KubeletConfiguration
}

// WriteGuestNodeFiles writes into hostDir what the guest's kubelet and a client in the guest need, laid
// out as they will be under g.Dir in the guest: pki/ca.crt, pki/kubelet-client.{crt,key} (CN
// system:node:<name>), pki/kubelet-serving.{crt,key} (for g.IP), kubelet.kubeconfig, admin.kubeconfig
// (the control plane's admin, for the agent) and kubelet-config.yaml.
func (cp *ControlPlane) WriteGuestNodeFiles(hostDir string, g GuestNode) error {
	pkiDir := filepath.Join(hostDir, "pki")
	if err := os.MkdirAll(pkiDir, 0o700); err != nil {
		return fmt.Errorf("guest node pki dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(pkiDir, "ca.crt"), cp.pki.ca.certPEM, 0o644); err != nil {
		return fmt.Errorf("guest node ca: %w", err)
	}
	client, err := cp.pki.ca.issue(pkiDir, "kubelet-client", certSpec{
		commonName: "system:node:" + g.Name, organization: []string{"system:nodes"}, client: true})
	if err != nil {
		return err
	}
	if _, err := cp.pki.ca.issue(pkiDir, "kubelet-serving", certSpec{
		commonName: g.Name, ips: []net.IP{g.IP}, dnsNames: []string{g.Name}, server: true}); err != nil {
		return err
	}
	kubeconfig := filepath.Join(hostDir, "kubelet.kubeconfig")
	if err := writeKubeconfig(kubeconfig, g.Server, cp.pki.ca.certPEM, "system:node:"+g.Name,
		credentials{certPEM: client.certPEM, keyPEM: client.keyPEM}); err != nil {
		return err
	}
	if err := retarget(kubeconfig, kubeconfig, g.Server, g.TLSServerName); err != nil {
		return err
	}
	if err := retarget(cp.kubeconfig, filepath.Join(hostDir, "admin.kubeconfig"), g.Server, g.TLSServerName); err != nil {
		return err
	}
	cfg, err := MergeKubeletConfig(DefaultKubeletConfig(g.Dir, g.IP, filepath.Join(g.Dir, "pki", "ca.crt")), g.KubeletConfig)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(hostDir, "kubelet-config.yaml"), cfg, 0o644); err != nil {
		return fmt.Errorf("write guest kubelet config: %w", err)
	}
	return nil
}

// ContainerdSocket is where the kubelet of DefaultKubeletConfig(dir, ...) finds containerd.
func ContainerdSocket(dir string) string { return containerdSocket(dir) }

// KubeletPath is the pinned kubelet binary the control plane's binaries came with.
func (cp *ControlPlane) KubeletPath() string { return cp.bins.Path("kubelet") }

// APIPort is the port of the API server on the host's loopback.
func (cp *ControlPlane) APIPort() (string, error) {
	u, err := url.Parse(cp.server)
	if err != nil {
		return "", fmt.Errorf("api server url %q: %w", cp.server, err)
	}
	return u.Port(), nil
}

// retarget copies the kubeconfig src to dst with every cluster's server set to server and its TLS
// server name to name.
func retarget(src, dst, server, name string) error {
	cfg, err := clientcmd.LoadFromFile(src)
	if err != nil {
		return fmt.Errorf("read kubeconfig %s: %w", src, err)
	}
	for _, c := range cfg.Clusters {
		c.Server, c.TLSServerName = server, name
	}
	if err := clientcmd.WriteToFile(*cfg, dst); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", dst, err)
	}
	return nil
}
