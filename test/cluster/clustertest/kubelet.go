package clustertest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/kube-pressure/pressure/test/cluster"
)

// KubeletServer serves h over TLS with a certificate the apiserver trusts as a kubelet's (signed by
// the control plane's CA) on a non-loopback address of this machine (the apiserver's node proxy
// refuses loopback), until t ends, and returns that address and the port: a stats source for a
// Node object without a real kubelet behind it.
func KubeletServer(t testing.TB, cp *cluster.ControlPlane, h http.Handler) (string, int) {
	t.Helper()
	ip := HostIP(t)
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
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "test-kubelet"},
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

// SilentKubelet is a KubeletServer that accepts every request and never answers, as a kubelet stuck
// under pressure does. The apiserver's node proxy is long-running (no request timeout), so without a
// bound of the client's own a request to it waits forever.
func SilentKubelet(t testing.TB, cp *cluster.ControlPlane) (string, int) {
	t.Helper()
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	return KubeletServer(t, cp, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-stop }))
}

// SummaryKubelet serves a Summary API and /configz for node: memory.available starts at available
// bytes of capacity and, with every Summary served, falls by fall bytes while the stats time advances
// 10s; configz is the /configz body.
func SummaryKubelet(node string, capacity, available, fall uint64, configz string) http.Handler {
	t0 := time.Now().UTC().Truncate(time.Second)
	var mu sync.Mutex
	served := uint64(0)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stats/summary":
			mu.Lock()
			avail, at := available-served*fall, t0.Add(time.Duration(served)*10*time.Second)
			served++
			mu.Unlock()
			fmt.Fprintf(w, `{"node":{"nodeName":%q,"memory":{"time":%q,"availableBytes":%d,"workingSetBytes":%d}},"pods":[]}`,
				node, at.Format(time.RFC3339), avail, capacity-avail)
		case "/configz":
			_, _ = w.Write([]byte(configz))
		default:
			http.NotFound(w, r)
		}
	})
}

// RegisterNode creates a Node whose kubelet is at ip:port, with memory bytes of memory capacity and
// conds, unschedulable (nothing is scheduled to a node without a real kubelet).
func RegisterNode(ctx context.Context, t testing.TB, cs kubernetes.Interface, name, ip string, port int, memory int64,
	conds ...corev1.NodeCondition) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Unschedulable: true}}
	if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The node lifecycle controller writes new nodes too: retry on conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Capacity = corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(memory, resource.BinarySI)}
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
		n.Status.DaemonEndpoints = corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(port)}}
		n.Status.Conditions = conds
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// HostIP returns the first non-loopback IPv4 address of this machine; it skips (fails under
// CI=true) when there is none.
func HostIP(t testing.TB) string {
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
	SkipOrFail(t, "no non-loopback IPv4 address: the apiserver's node proxy refuses loopback")
	return ""
}
