package avoidwebhook

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// Certificate serves the key pair in CertFile and KeyFile (a mounted Secret: kubelet swaps both files
// when the Secret changes), read again when either file's modification time changes.
type Certificate struct {
	CertFile, KeyFile string

	mu              sync.Mutex
	cert            *tls.Certificate
	certMod, keyMod time.Time
}

// Load reads the key pair if it changed since the last read, and returns it.
func (c *Certificate) Load() (*tls.Certificate, error) {
	cs, err := os.Stat(c.CertFile)
	if err != nil {
		return nil, fmt.Errorf("webhook certificate: %w", err)
	}
	ks, err := os.Stat(c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("webhook key: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert != nil && cs.ModTime().Equal(c.certMod) && ks.ModTime().Equal(c.keyMod) {
		return c.cert, nil
	}
	pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("webhook key pair %s, %s: %w", c.CertFile, c.KeyFile, err)
	}
	c.cert, c.certMod, c.keyMod = &pair, cs.ModTime(), ks.ModTime()
	return c.cert, nil
}

// TLSConfig is the server's TLS configuration: TLS 1.2 or later, the key pair from c on each handshake.
func (c *Certificate) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.Load() }}
}
