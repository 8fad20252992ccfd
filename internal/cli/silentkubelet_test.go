package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/test/cluster"
)

// silentKubelet starts a TLS server the apiserver trusts as a kubelet (its certificate is signed by
// the control plane's CA) that accepts every request and never answers, as a kubelet stuck under
// pressure does. The apiserver's node proxy is long-running (no request timeout), so without a
// bound of our own a request to it waits forever. It returns a non-loopback address of this machine
// (the node proxy refuses loopback) and the port.
func silentKubelet(t *testing.T, cp *cluster.ControlPlane) (string, int) {
	t.Helper()
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	return kubeletServer(t, cp, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-stop }))
}

// kubeletServer serves h over TLS with a certificate the apiserver trusts as a kubelet's, on a
// non-loopback address of this machine, and returns that address and the port.
func kubeletServer(t *testing.T, cp *cluster.ControlPlane, h http.Handler) (string, int) {
	t.Helper()
	ip := hostIP(t)
	ca, err := tls.LoadX509KeyPair(cp.CAFile(), filepath.Join(filepath.Dir(cp.CAFile()), "ca.key"))
	if err != nil {
		t.Fatalf("control plane CA: %v", err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "silent-kubelet"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP(ip)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), ca.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return ip, ln.Addr().(*net.TCPAddr).Port
}

// hostIP returns the first non-loopback IPv4 address of this machine.
func hostIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no non-loopback IPv4 address: the apiserver's node proxy refuses loopback")
	}
	t.Skip("no non-loopback IPv4 address: the apiserver's node proxy refuses loopback")
	return ""
}
