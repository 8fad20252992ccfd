package cluster

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

func TestWriteGuestNodeFilesPointsThePathsIntoTheGuestAndTheServerAtTheForward(t *testing.T) {
	dir := t.TempDir()
	pki, err := newControlPlanePKI(filepath.Join(dir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	cp := &ControlPlane{dir: dir, server: "https://127.0.0.1:6443", pki: pki}
	if err := cp.writeKubeconfigs(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "guest")
	if err := cp.WriteGuestNodeFiles(out, GuestNode{Name: "g", IP: net.IPv4(10, 0, 2, 15),
		Server: "https://10.0.2.2:6443", TLSServerName: "localhost", Dir: "/node"}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kubelet.kubeconfig", "admin.kubeconfig"} {
		cfg, err := clientcmd.LoadFromFile(filepath.Join(out, k))
		if err != nil {
			t.Fatal(err)
		}
		for name, c := range cfg.Clusters {
			if c.Server != "https://10.0.2.2:6443" || c.TLSServerName != "localhost" || len(c.CertificateAuthorityData) == 0 {
				t.Errorf("%s cluster %s: server %q, tls-server-name %q, %d bytes of CA; want the forward, localhost and the CA",
					k, name, c.Server, c.TLSServerName, len(c.CertificateAuthorityData))
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "kubelet-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"clientCAFile: /node/pki/ca.crt", "unix:///node/containerd.sock",
		"tlsCertFile: /node/pki/kubelet-serving.crt", "address: 10.0.2.15"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("kubelet-config.yaml lacks %q:\n%s", want, b)
		}
	}
	for _, f := range []string{"pki/ca.crt", "pki/kubelet-client.crt", "pki/kubelet-serving.key"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%v", err)
		}
	}
}
