package daemon

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// RESTConfig is the REST configuration from kubeconfig, or in-cluster when it is empty.
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --kubeconfig and not in a cluster: %w", err)
		}
		return rc, nil
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	return rc, nil
}

// Client is how a daemon's client talks to the API server. Zero fields keep client-go's defaults.
type Client struct {
	QPS       float32
	Burst     int
	UserAgent string
	// Protobuf asks for protobuf (smaller and cheaper to decode than JSON), with JSON as the fallback.
	Protobuf bool
}

// Apply returns a copy of rc with c's settings.
func (c Client) Apply(rc *rest.Config) *rest.Config {
	rc = rest.CopyConfig(rc)
	if c.QPS != 0 {
		rc.QPS = c.QPS
	}
	if c.Burst != 0 {
		rc.Burst = c.Burst
	}
	if c.UserAgent != "" {
		rc.UserAgent = c.UserAgent
	}
	if c.Protobuf {
		rc.ContentType = "application/vnd.kubernetes.protobuf"
		rc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
	return rc
}
