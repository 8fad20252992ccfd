package cluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity is long enough for any test run and short enough to be obviously a test cert.
const certValidity = 7 * 24 * time.Hour

// keyPair is a certificate with its private key, both also written as PEM files.
type keyPair struct {
	cert     *x509.Certificate
	key      crypto.Signer
	certPEM  []byte
	keyPEM   []byte
	certFile string
	keyFile  string
}

// certSpec says what a leaf certificate is for.
type certSpec struct {
	commonName   string
	organization []string
	ips          []net.IP
	dnsNames     []string
	server       bool
	client       bool
}

// newCA creates a self-signed CA and writes <dir>/<name>.crt and .key.
func newCA(dir, name, commonName string) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key for ca %s: %w", name, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("create ca certificate %s: %w", name, err)
	}
	return writeKeyPair(dir, name, der, key)
}

// issue signs a leaf certificate with ca and writes <dir>/<name>.crt and .key.
func (ca *keyPair) issue(dir, name string, spec certSpec) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key for %s: %w", name, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: spec.commonName, Organization: spec.organization},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		IPAddresses:  spec.ips,
		DNSNames:     spec.dnsNames,
	}
	if spec.server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if spec.client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return nil, fmt.Errorf("sign certificate %s: %w", name, err)
	}
	return writeKeyPair(dir, name, der, key)
}

func writeKeyPair(dir, name string, der []byte, key crypto.Signer) (*keyPair, error) {
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse certificate %s: %w", name, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal key %s: %w", name, err)
	}
	kp := &keyPair{
		cert:     cert,
		key:      key,
		certPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:   pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		certFile: filepath.Join(dir, name+".crt"),
		keyFile:  filepath.Join(dir, name+".key"),
	}
	if err := os.WriteFile(kp.certFile, kp.certPEM, 0o644); err != nil {
		return nil, fmt.Errorf("write certificate: %w", err)
	}
	if err := os.WriteFile(kp.keyFile, kp.keyPEM, 0o600); err != nil {
		return nil, fmt.Errorf("write key: %w", err)
	}
	return kp, nil
}

// writeServiceAccountKeys writes the RSA key pair that signs and verifies service account
// tokens: <dir>/sa.key (private, PKCS#1) and <dir>/sa.pub (public, PKIX).
func writeServiceAccountKeys(dir string) (keyFile, pubFile string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", fmt.Errorf("generate service account key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", fmt.Errorf("marshal service account public key: %w", err)
	}
	keyFile = filepath.Join(dir, "sa.key")
	pubFile = filepath.Join(dir, "sa.pub")
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("write service account key: %w", err)
	}
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		return "", "", fmt.Errorf("write service account public key: %w", err)
	}
	return keyFile, pubFile, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		// crypto/rand does not fail on Linux; a fixed serial would still be valid.
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
