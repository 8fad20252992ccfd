package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/kube-pressure/pressure/internal/actuate"
)

// ErrKubeletFileMissing is the preflight's verdict on a kubelet configuration file that is not there
// to read.
var ErrKubeletFileMissing = errors.New("kubelet configuration file not found")

// installDoc is where the per-platform kubelet configuration paths are listed.
const installDoc = "https://github.com/kube-pressure/pressure/blob/main/docs/install.md#managed-nodes"

// KubeletFileError says what is wrong with the kubelet configuration file at Path and how to fix it.
type KubeletFileError struct {
	Path    string
	Problem string // "does not exist", "is empty", "is a directory"
}

func (e *KubeletFileError) Error() string {
	return fmt.Sprintf("kubelet config file %s %s: the kubelet of this node keeps its KubeletConfiguration elsewhere "+
		"or is configured by flags; with the chart, set agent.kubeletConfig.hostPath to the node's file "+
		"(kubeadm /var/lib/kubelet/config.yaml, EKS AL2023 /etc/kubernetes/kubelet/config.json, "+
		"EKS AL2 /etc/kubernetes/kubelet/kubelet-config.json, GKE /home/kubernetes/kubelet-config.yaml) "+
		"or agent.kubeletConfig.source=nodeProxy (AKS, k3s), see %s; without it, --kubelet-config: %v",
		e.Path, e.Problem, installDoc, ErrKubeletFileMissing)
}

func (e *KubeletFileError) Unwrap() error { return ErrKubeletFileMissing }

// checkKubeletFile returns a *KubeletFileError when path cannot hold a kubelet configuration: missing,
// a directory, or empty (what the chart's FileOrCreate mount leaves where the host has no file; read
// as YAML it would be the kubelet's defaults, silently). Other errors are left to the loader.
func checkKubeletFile(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &KubeletFileError{Path: path, Problem: "does not exist"}
	case err != nil:
		return nil
	case fi.IsDir():
		return &KubeletFileError{Path: path, Problem: "is a directory"}
	case fi.Size() == 0:
		return &KubeletFileError{Path: path, Problem: "is empty"}
	}
	return nil
}

// preflight checks, before anything is started, what would otherwise leave the agent running blind.
// A failure is logged, written as a Warning Event on the node (best effort, 10 s) and returned: the
// agent exits, and its pod's restarts, its log and the node's Events all say what to set.
func preflight(ctx context.Context, cfg Config, opts Options) error {
	if cfg.KubeletConfigFile == "" {
		return nil
	}
	perr := checkKubeletFile(cfg.KubeletConfigFile)
	if perr == nil {
		return nil
	}
	node := cfg.Settings.Node
	opts.Logger.Error("preflight failed: "+perr.Error(), "node", node, "kubeletConfigFile", cfg.KubeletConfigFile,
		"value", "agent.kubeletConfig.hostPath")
	client, err := newClient(opts.RESTConfig, cfg.APITimeout)
	if err == nil {
		ectx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		err = actuate.WriteNodeEvent(ectx, client, node, actuate.ReasonKubeletConfigNotFound, perr.Error(), opts.Clock.Now())
	}
	if err != nil {
		opts.Logger.Warn("preflight: the node event was not written; the log line above stands", "node", node, "err", err)
	}
	return fmt.Errorf("agent: preflight: %w", perr)
}
