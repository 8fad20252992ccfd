package cluster_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
	"github.com/kube-pressure/pressure/test/images"
)

// TestPodsReachTheAPIServerThroughTheKubernetesService is level 2: a pod's network namespace has
// a default route to the bridge, and HTTPS (a socket opened in the pod's netns) to the kubernetes Service IP (10.0.0.1:443) reaches
// the API server, whose certificate verifies for that address; Stop removes the DNAT rule.
func TestPodsReachTheAPIServerThroughTheKubernetesService(t *testing.T) {
	if p := clustertest.NodeProblem(); p != "" {
		clustertest.SkipOrFail(t, "level-2 node unavailable: %s", p)
	}
	cp := clustertest.ControlPlane(t)
	node := clustertest.Node(t, cp, cluster.NodeOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "default"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "c", Image: images.PauseName, ImagePullPolicy: corev1.PullNever}},
		},
	}
	if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ip string
	for ip == "" {
		p, err := c.CoreV1().Pods("default").Get(ctx, "net", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.Phase == corev1.PodRunning {
			ip = p.Status.PodIP
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pod not Running: phase %s", p.Status.Phase)
		case <-time.After(500 * time.Millisecond):
		}
	}
	netns := podNetns(t, ip)
	routes, err := exec.Command("ip", "netns", "exec", netns, "ip", "route").CombinedOutput()
	if err != nil {
		t.Fatalf("ip route in %s: %v: %s", netns, err, routes)
	}
	if want := "default via " + node.IP().String(); !strings.Contains(string(routes), want) {
		t.Errorf("routes of the pod:\n%s\nwant a line with %q", routes, want)
	}
	body := getFromNetns(t, netns, "10.0.0.1:443", filepath.Join(cp.Dir(), "pki", "ca.crt"), "/version")
	if !strings.Contains(body, `"gitVersion": "v1.37.2`) {
		t.Errorf("/version from the pod: %s, want gitVersion v1.37.2", body)
	}
	route := node.Cleanup().APIRoute
	if route == nil {
		t.Fatal("node cleanup records no API route")
	}
	if err := node.Stop(); err != nil {
		t.Fatal(err)
	}
	rules, err := exec.Command("iptables", "-w", "-t", "nat", "-S", "PREROUTING").CombinedOutput()
	if err != nil {
		t.Fatalf("iptables -S: %v: %s", err, rules)
	}
	if strings.Contains(string(rules), route.Target) {
		t.Errorf("DNAT rule to %s left after Stop:\n%s", route.Target, rules)
	}
}

// podNetns finds the CNI network namespace holding ip.
func podNetns(t *testing.T, ip string) string {
	t.Helper()
	entries, err := os.ReadDir("/run/netns")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		out, err := exec.Command("ip", "netns", "exec", e.Name(), "ip", "-4", "-o", "addr").CombinedOutput()
		if err == nil && strings.Contains(string(out), " "+ip+"/") {
			return e.Name()
		}
	}
	t.Fatalf("no network namespace in /run/netns holds %s", ip)
	return ""
}

// getFromNetns does an HTTPS GET of path on addr from a socket opened in the network namespace
// /run/netns/<netns> (the pod's routes and the node's DNAT apply), verifying the server's
// certificate against caFile for addr's IP. It returns the body.
func getFromNetns(t *testing.T, netns, addr, caFile, path string) string {
	t.Helper()
	conn, err := dialInNetns(netns, addr)
	if err != nil {
		t.Fatalf("dial %s from netns %s: %v", addr, netns, err)
	}
	defer conn.Close()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	host, _, _ := net.SplitHostPort(addr)
	tc := tls.Client(conn, &tls.Config{RootCAs: pool, ServerName: host})
	_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(tc, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, host); err != nil {
		t.Fatalf("GET https://%s%s from netns %s: %v", addr, path, netns, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		t.Fatalf("GET https://%s%s from netns %s: %v", addr, path, netns, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET https://%s%s from netns %s: %s: %s", addr, path, netns, resp.Status, b)
	}
	return string(b)
}

// dialInNetns opens a TCP connection from inside /run/netns/<netns>: the socket keeps the
// namespace it was created in after the thread switches back.
func dialInNetns(netns, addr string) (net.Conn, error) {
	runtime.LockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer self.Close()
	target, err := os.Open(filepath.Join("/run/netns", netns))
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("setns %s: %w", netns, err)
	}
	conn, dialErr := net.DialTimeout("tcp", addr, 10*time.Second)
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays locked and in the pod's namespace: the runtime discards it on exit.
		return nil, errors.Join(dialErr, fmt.Errorf("setns back: %w", err))
	}
	runtime.UnlockOSThread()
	return conn, dialErr
}
