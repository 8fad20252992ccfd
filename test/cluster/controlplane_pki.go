package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
)

// controlPlanePKI is every key the control plane uses, under <dir>/pki.
type controlPlanePKI struct {
	dir              string
	ca               *keyPair // signs serving and client certificates (and kubelet serving certs)
	apiserver        *keyPair // kube-apiserver serving
	admin            *keyPair // O=system:masters client
	controllerMgr    *keyPair // CN=system:kube-controller-manager
	scheduler        *keyPair // CN=system:kube-scheduler
	kubeletClient    *keyPair // apiserver -> kubelet (O=system:masters)
	frontProxyCA     *keyPair
	frontProxyClient *keyPair
	saKey, saPub     string // service account token signing key pair
}

func newControlPlanePKI(dir string) (*controlPlanePKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create pki dir: %w", err)
	}
	pki := &controlPlanePKI{dir: dir}
	var err error
	if pki.ca, err = newCA(dir, "ca", "pressure-test-ca"); err != nil {
		return nil, err
	}
	leaves := []struct {
		dst  **keyPair
		name string
		spec certSpec
	}{
		{&pki.apiserver, "apiserver", certSpec{
			commonName: "kube-apiserver",
			ips:        []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(10, 0, 0, 1), net.IPv6loopback},
			dnsNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
				"kubernetes.default.svc.cluster.local"},
			server: true,
		}},
		{&pki.admin, "admin", certSpec{commonName: "pressure-admin", organization: []string{"system:masters"}, client: true}},
		{&pki.controllerMgr, "kube-controller-manager", certSpec{commonName: "system:kube-controller-manager", client: true}},
		{&pki.scheduler, "kube-scheduler", certSpec{commonName: "system:kube-scheduler", client: true}},
		{&pki.kubeletClient, "apiserver-kubelet-client", certSpec{
			commonName: "kube-apiserver-kubelet-client", organization: []string{"system:masters"}, client: true}},
	}
	for _, l := range leaves {
		if *l.dst, err = pki.ca.issue(dir, l.name, l.spec); err != nil {
			return nil, err
		}
	}
	if pki.frontProxyCA, err = newCA(dir, "front-proxy-ca", "pressure-test-front-proxy-ca"); err != nil {
		return nil, err
	}
	if pki.frontProxyClient, err = pki.frontProxyCA.issue(dir, "front-proxy-client",
		certSpec{commonName: "front-proxy-client", client: true}); err != nil {
		return nil, err
	}
	if pki.saKey, pki.saPub, err = writeServiceAccountKeys(dir); err != nil {
		return nil, err
	}
	return pki, nil
}

// writeKubeconfigs writes admin.kubeconfig and the controller manager's and scheduler's.
func (cp *ControlPlane) writeKubeconfigs() error {
	cp.kubeconfig = filepath.Join(cp.dir, "admin.kubeconfig")
	files := []struct {
		path, user string
		kp         *keyPair
	}{
		{cp.kubeconfig, "pressure-admin", cp.pki.admin},
		{filepath.Join(cp.dir, "kube-controller-manager.kubeconfig"), "system:kube-controller-manager", cp.pki.controllerMgr},
		{filepath.Join(cp.dir, "kube-scheduler.kubeconfig"), "system:kube-scheduler", cp.pki.scheduler},
	}
	for _, f := range files {
		if err := writeKubeconfig(f.path, cp.server, cp.pki.ca.certPEM, f.user,
			credentials{certPEM: f.kp.certPEM, keyPEM: f.kp.keyPEM}); err != nil {
			return err
		}
	}
	return nil
}

// httpOK GETs url and returns nil on status 200. With pki it presents the admin client
// certificate and does not verify the server (controller manager and scheduler serve with
// self-signed certificates); without, it uses plain HTTP.
func httpOK(ctx context.Context, pki *controlPlanePKI, url string) error {
	tr := &http.Transport{DisableKeepAlives: true}
	if pki != nil {
		cert, err := tls.X509KeyPair(pki.admin.certPEM, pki.admin.keyPEM)
		if err != nil {
			return fmt.Errorf("load admin certificate: %w", err)
		}
		tr.TLSClientConfig = &tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true} //nolint:gosec // self-signed test daemons on loopback
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d: %s", url, resp.StatusCode, body)
	}
	return nil
}
