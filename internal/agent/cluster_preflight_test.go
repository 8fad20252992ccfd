package agent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kube-pressure/pressure/internal/actuate"
)

// testPreflightMissingKubeletFile: the node's kubelet keeps its configuration elsewhere (an EKS or GKE
// node with the kubeadm default path). The agent does not start blind: it returns at once, and its log
// line and a Warning Event on its Node say what is missing and which value to set.
func testPreflightMissingKubeletFile(t *testing.T, rc *rest.Config, client kubernetes.Interface) {
	w := newWorld(t, client, "node-nokubelet")
	cfg := w.config(true)
	cfg.KubeletConfigFile = filepath.Join(t.TempDir(), "config.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.MultiWriter(testWriter{t}, &w.logs), nil))
	err := RunWithOptions(ctx, cfg, Options{RESTConfig: rc, Registry: prometheus.NewRegistry(), Logger: log})
	if !errors.Is(err, ErrKubeletFileMissing) {
		t.Fatalf("RunWithOptions = %v, want ErrKubeletFileMissing", err)
	}
	if l := w.logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "agent.kubeletConfig.hostPath") ||
		!strings.Contains(l, cfg.KubeletConfigFile+" does not exist") {
		t.Errorf("start log does not name the file and the value to set:\n%s", l)
	}
	evs := w.events(actuate.ReasonKubeletConfigNotFound)
	if len(evs) != 1 {
		t.Fatalf("%d %s events on node %s, want 1", len(evs), actuate.ReasonKubeletConfigNotFound, w.node)
	}
	ev := evs[0]
	if ev.Type != "Warning" || ev.InvolvedObject.Kind != "Node" || ev.Source.Host != w.node ||
		!strings.Contains(ev.Message, "agent.kubeletConfig.hostPath") || !strings.Contains(ev.Message, cfg.KubeletConfigFile) {
		t.Errorf("event %s: type %s on %s/%s source %v message %q", ev.Name, ev.Type, ev.InvolvedObject.Kind,
			ev.InvolvedObject.Name, ev.Source, ev.Message)
	}
}
