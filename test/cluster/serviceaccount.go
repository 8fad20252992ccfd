package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// ServiceAccountKubeconfig mints a token for the existing ServiceAccount namespace/name with the
// TokenRequest API (valid for ttl; the apiserver may extend short ones to 10 minutes) and writes
// a kubeconfig using it to <dir>/sa-<namespace>-<name>.kubeconfig. It returns the path and an
// equivalent client config. Authorization is whatever RBAC grants that ServiceAccount.
func (cp *ControlPlane) ServiceAccountKubeconfig(ctx context.Context, namespace, name string, ttl time.Duration) (string, *rest.Config, error) {
	client, err := cp.Client()
	if err != nil {
		return "", nil, err
	}
	secs := int64(ttl / time.Second)
	tr, err := client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", nil, fmt.Errorf("token request for serviceaccount %s/%s: %w", namespace, name, err)
	}
	cred := credentials{token: tr.Status.Token}
	path := filepath.Join(cp.dir, "sa-"+namespace+"-"+name+".kubeconfig")
	user := "system:serviceaccount:" + namespace + ":" + name
	if err := writeKubeconfig(path, cp.server, cp.pki.ca.certPEM, user, cred); err != nil {
		return "", nil, err
	}
	return path, restConfig(cp.server, cp.pki.ca.certPEM, cred), nil
}
