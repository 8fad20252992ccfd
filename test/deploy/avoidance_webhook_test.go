package deploy

// The avoidance's fallback on clusters without MutatingAdmissionPolicy v1 (issue 29): helm template on
// each supported minor renders exactly one of the policy and the janitor's webhook, and the webhook's
// certificate, Service, configuration and the janitor's mount of them fit together.

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const (
	webhookConfig  = "pressure-agent-avoid-evicted-node"
	webhookService = "pressure-janitor-avoidance-webhook"
	webhookSecret  = "pressure-janitor-avoidance-webhook-tls"
)

// renderOn runs helm template on Kubernetes kv with set.
func renderOn(t *testing.T, kv string, set ...string) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"template", releaseName, chartDir(t), "--namespace", releaseNS, "--kube-version", kv}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return objects(t, runHelm(t, args...))
}

func count(objs []*unstructured.Unstructured, kind string) int {
	n := 0
	for _, o := range objs {
		if o.GetKind() == kind {
			n++
		}
	}
	return n
}

func TestEachMinorRendersEitherTheAvoidancePolicyOrTheJanitorsWebhook(t *testing.T) {
	for _, tc := range []struct {
		name          string
		kv            string
		set           []string
		policy, hooks bool
	}{
		{"1.34 renders the webhook and no policy", "1.34.4", []string{live}, false, true},
		{"1.35 renders the webhook and no policy", "1.35.4", []string{live}, false, true},
		{"1.36 renders the policy and no webhook", "1.36.3", []string{live}, true, false},
		{"1.37 renders the policy and no webhook", "1.37.2", []string{live}, true, false},
		{"1.34 with agent.avoidance.webhook.enabled=false renders neither", "1.34.4", []string{live, "agent.avoidance.webhook.enabled=false"}, false, false},
		{"1.34 without the janitor renders no webhook (nothing would serve it)", "1.34.4", []string{live, "janitor.enabled=false"}, false, false},
		{"1.34 in dry-run renders no webhook (the agent writes no avoidance)", "1.34.4", nil, false, false},
		{"1.34 with agent.avoidance.enabled=false renders no webhook", "1.34.4", []string{live, "agent.avoidance.enabled=false"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := renderOn(t, tc.kv, tc.set...)
			if got := count(objs, "MutatingAdmissionPolicy") == 1 && count(objs, "MutatingAdmissionPolicyBinding") == 1; got != tc.policy {
				t.Errorf("policy and binding rendered: %v, want %v (%v)", got, tc.policy, mutating(objs))
			}
			if got := count(objs, "MutatingWebhookConfiguration") == 1; got != tc.hooks {
				t.Errorf("webhook configuration rendered: %v, want %v (%v)", got, tc.hooks, mutating(objs))
			}
			hasSecret := slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool {
				return o.GetKind() == "Secret" && o.GetName() == webhookSecret
			})
			hasService := slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool {
				return o.GetKind() == "Service" && o.GetName() == webhookService
			})
			if hasSecret != tc.hooks || hasService != tc.hooks {
				t.Errorf("webhook Secret %v and Service %v rendered, want %v", hasSecret, hasService, tc.hooks)
			}
			// The agents write avoidances exactly when something applies them.
			agentNS := avoidanceNamespaceOf(t, objs)
			if want := tc.policy || tc.hooks; (agentNS != "") != want {
				t.Errorf("agent's loopBreaker.avoidanceNamespace %q, want one: %v", agentNS, want)
			}
			if tc.hooks {
				checkWebhook(t, objs)
			}
		})
	}
}

// avoidanceNamespaceOf reads loopBreaker.avoidanceNamespace from the agent's configuration ("" without
// an agent).
func avoidanceNamespaceOf(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	if !slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool {
		return o.GetKind() == "ConfigMap" && o.GetName() == "pressure-agent"
	}) {
		return ""
	}
	var cfg struct {
		LoopBreaker struct {
			AvoidanceNamespace string `json:"avoidanceNamespace"`
		} `json:"loopBreaker"`
	}
	if err := yaml.Unmarshal([]byte(configFile(t, objs, "pressure-agent")), &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.LoopBreaker.AvoidanceNamespace
}

// checkWebhook: failurePolicy Ignore, a short timeout, kube-system and the release namespace excluded,
// the caBundle is the Secret's CA, which signed a certificate for the Service's DNS name, and the
// janitor serves with that Secret's files, reads the avoidance ConfigMaps, and exposes the port.
func checkWebhook(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	cfg := find(t, objs, "MutatingWebhookConfiguration", webhookConfig)
	hooks, _, _ := unstructured.NestedSlice(cfg.Object, "webhooks")
	if len(hooks) != 1 {
		t.Fatalf("%d webhooks, want 1", len(hooks))
	}
	h := hooks[0].(map[string]any)
	if h["failurePolicy"] != "Ignore" || h["sideEffects"] != "None" {
		t.Errorf("failurePolicy %v, sideEffects %v; want Ignore, None", h["failurePolicy"], h["sideEffects"])
	}
	if to, _ := h["timeoutSeconds"].(float64); to < 1 || to > 5 {
		t.Errorf("timeoutSeconds %v, want a short one (1-5)", h["timeoutSeconds"])
	}
	ns, _, _ := unstructured.NestedSlice(h, "namespaceSelector", "matchExpressions")
	if len(ns) != 1 || ns[0].(map[string]any)["operator"] != "NotIn" ||
		!slices.Equal(strSlice(ns[0].(map[string]any)["values"]), []string{"kube-system", releaseNS}) {
		t.Errorf("namespaceSelector %v, want kubernetes.io/metadata.name NotIn [kube-system %s]", ns, releaseNS)
	}
	svc, _, _ := unstructured.NestedMap(h, "clientConfig", "service")
	if svc["name"] != webhookService || svc["namespace"] != releaseNS || svc["path"] != "/avoid-evicted-node" {
		t.Errorf("clientConfig.service %v, want %s/%s path /avoid-evicted-node", svc, releaseNS, webhookService)
	}
	bundle, _, _ := unstructured.NestedString(h, "clientConfig", "caBundle")
	secret := find(t, objs, "Secret", webhookSecret)
	data, _, _ := unstructured.NestedStringMap(secret.Object, "data")
	if bundle == "" || bundle != data["ca.crt"] {
		t.Errorf("caBundle is not the Secret's ca.crt")
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(b64(t, data["ca.crt"])) {
		t.Fatalf("Secret's ca.crt holds no certificate")
	}
	block, _ := pem.Decode(b64(t, data["tls.crt"]))
	if block == nil {
		t.Fatalf("Secret's tls.crt holds no PEM block")
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: webhookService + "." + releaseNS + ".svc"}); err != nil {
		t.Errorf("the serving certificate does not verify for the Service's name with the caBundle: %v", err)
	}
	var jc struct {
		AvoidanceWebhook struct {
			BindAddress, CertFile, KeyFile, Namespace string
		} `json:"avoidanceWebhook"`
	}
	if err := yaml.Unmarshal([]byte(configFile(t, objs, "pressure-janitor")), &jc); err != nil {
		t.Fatal(err)
	}
	aw := jc.AvoidanceWebhook
	if aw.BindAddress != ":9443" || aw.Namespace != releaseNS || !strings.HasPrefix(aw.CertFile, "/etc/pressure/avoidance-webhook/") ||
		!strings.HasPrefix(aw.KeyFile, "/etc/pressure/avoidance-webhook/") {
		t.Errorf("janitor's avoidanceWebhook %+v, want :9443, namespace %s and the mounted Secret's files", aw, releaseNS)
	}
	dep := find(t, objs, "Deployment", "pressure-janitor")
	if !strings.Contains(toJSON(t, podSpec(t, dep)), `"secretName":"`+webhookSecret+`"`) {
		t.Errorf("the janitor pods do not mount Secret %s", webhookSecret)
	}
	if !strings.Contains(toJSON(t, container(t, dep)), `"name":"avoidance"`) {
		t.Errorf("the janitor container does not name the webhook's port \"avoidance\" (the Service's targetPort)")
	}
	role := find(t, objs, "Role", "pressure-janitor-avoidance")
	if !hasRule(role, "configmaps") {
		t.Errorf("the janitor's Role %s does not let it list the avoidance ConfigMaps", role.GetName())
	}
}

func b64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}
