package avoidwebhook

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

func review(t *testing.T, op admissionv1.Operation, resource, sub string, obj any) []byte {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: types.UID("req-1"), Operation: op, SubResource: sub,
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: resource}, Object: runtime.RawExtension{Raw: raw}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHandler(t *testing.T) {
	params := func() []Param { return []Param{param("node-a", rsUID)} }
	h := Handler(params, slog.New(slog.NewTextHandler(io.Discard, nil)))
	listed := pod("ReplicaSet", rsUID, nil)
	cases := []struct {
		name      string
		body      []byte
		status    int
		wantPatch bool
	}{
		{"a listed controller's new pod is allowed with the avoidance's patch", review(t, admissionv1.Create, "pods", "", listed), http.StatusOK, true},
		{"an unlisted controller's pod is allowed unchanged", review(t, admissionv1.Create, "pods", "", pod("ReplicaSet", otherUID, nil)), http.StatusOK, false},
		{"an update is allowed unchanged", review(t, admissionv1.Update, "pods", "", listed), http.StatusOK, false},
		{"a subresource is allowed unchanged", review(t, admissionv1.Create, "pods", "binding", listed), http.StatusOK, false},
		{"another resource is allowed unchanged", review(t, admissionv1.Create, "configmaps", "", listed), http.StatusOK, false},
		{"a body that is no review is a bad request", []byte("{"), http.StatusBadRequest, false},
		{"a review without a request is a bad request", []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`), http.StatusBadRequest, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(tc.body)))
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.status != http.StatusOK {
				return
			}
			var out admissionv1.AdmissionReview
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
				t.Fatal(err)
			}
			if out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" || out.Response == nil ||
				out.Response.UID != "req-1" || !out.Response.Allowed {
				t.Fatalf("response %+v: want an allowed AdmissionReview v1 answering req-1", out)
			}
			if got := len(out.Response.Patch) > 0; got != tc.wantPatch {
				t.Errorf("patch %s, want one: %v", out.Response.Patch, tc.wantPatch)
			}
			if tc.wantPatch && (out.Response.PatchType == nil || *out.Response.PatchType != admissionv1.PatchTypeJSONPatch) {
				t.Errorf("patchType %v, want JSONPatch", out.Response.PatchType)
			}
		})
	}
}

// writePair writes a self-signed key pair for cn to dir/tls.crt and dir/tls.key.
func writePair(t *testing.T, dir, cn string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, DNSNames: []string{cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	// Distinct modification times, as kubelet's atomic swap of a Secret volume gives.
	mod := time.Now().Add(time.Duration(len(cn)) * time.Second)
	for name, block := range map[string]*pem.Block{"tls.crt": {Type: "CERTIFICATE", Bytes: der}, "tls.key": {Type: "PRIVATE KEY", Bytes: kb}} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCertificateIsReadAgainWhenItsFilesChange(t *testing.T) {
	dir := t.TempDir()
	c := &Certificate{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")}
	if _, err := c.Load(); err == nil {
		t.Fatalf("Load without files succeeded")
	}
	cn := func() string {
		t.Helper()
		pair, err := c.Load()
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return leaf.Subject.CommonName
	}
	writePair(t, dir, "first.example")
	if got := cn(); got != "first.example" {
		t.Fatalf("certificate %q, want first.example", got)
	}
	writePair(t, dir, "second.example.svc")
	if got := cn(); got != "second.example.svc" {
		t.Errorf("certificate %q after the files changed, want second.example.svc", got)
	}
	if err := os.WriteFile(c.KeyFile, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(c.KeyFile, time.Now().Add(time.Hour), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(); err == nil {
		t.Errorf("Load of a broken key succeeded")
	}
}
