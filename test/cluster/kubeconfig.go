package cluster

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// credentials are how a kubeconfig user authenticates: a client certificate or a bearer token.
type credentials struct {
	certPEM []byte
	keyPEM  []byte
	token   string
}

// writeKubeconfig writes a self-contained kubeconfig (CA and credentials embedded) for server.
func writeKubeconfig(path, server string, caPEM []byte, user string, cred credentials) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["pressure"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cred.certPEM,
		ClientKeyData:         cred.keyPEM,
		Token:                 cred.token,
	}
	cfg.Contexts["pressure"] = &clientcmdapi.Context{Cluster: "pressure", AuthInfo: user}
	cfg.CurrentContext = "pressure"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}

// restConfig builds a client config equivalent to writeKubeconfig's file.
func restConfig(server string, caPEM []byte, cred credentials) *rest.Config {
	return &rest.Config{
		Host:        server,
		BearerToken: cred.token,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   caPEM,
			CertData: cred.certPEM,
			KeyData:  cred.keyPEM,
		},
		QPS:   100,
		Burst: 200,
	}
}
