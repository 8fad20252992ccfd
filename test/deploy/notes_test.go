package deploy

// NOTES.txt as `helm install` prints it. helm template does not print the notes, so the test renders
// them with tpl from a copy of the chart (the same templates and helpers, no cluster needed).

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// notesRenderer is a template that renders notes/NOTES.txt (a copy of templates/NOTES.txt) into a
// ConfigMap, so that helm template shows it.
const notesRenderer = `apiVersion: v1
kind: ConfigMap
metadata:
  name: rendered-notes
data:
  notes: |
{{ tpl (.Files.Get "notes/NOTES.txt") . | indent 4 }}
`

// renderNotes renders the chart's NOTES.txt with the default values and set, on Kubernetes kv.
func renderNotes(t *testing.T, kv string, set ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pressure")
	if err := os.CopyFS(dir, os.DirFS(chartDir(t))); err != nil {
		t.Fatal(err)
	}
	notes, err := os.ReadFile(filepath.Join(dir, "templates", "NOTES.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"notes/NOTES.txt": notes, "templates/zz-rendered-notes.yaml": []byte(notesRenderer)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"template", releaseName, dir, "--namespace", releaseNS, "--kube-version", kv,
		"--show-only", "templates/zz-rendered-notes.yaml"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	var cm struct{ Data struct{ Notes string } }
	if err := yaml.Unmarshal([]byte(runHelm(t, args...)), &cm); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cm.Data.Notes, "is installed in namespace "+releaseNS) {
		t.Fatalf("rendered notes do not look like NOTES.txt:\n%s", cm.Data.Notes)
	}
	return cm.Data.Notes
}

func TestNotesSendEachUserToTheirEventsThePluginAndFullDocURLs(t *testing.T) {
	docURL := regexp.MustCompile(`https://github\.com/kube-pressure/pressure/blob/main/docs/([a-z-]+\.md)(#[a-z0-9-]+)?`)
	for _, tc := range []struct {
		name        string
		kv          string
		set         []string
		want, never []string
	}{
		{"the defaults: a dry run of both, their dry-run Events, and how to go live", kubeVersion, nil,
			[]string{"DRY RUN (dryRun=true", "--reuse-values --set dryRun=false",
				"kubectl get events -A --field-selector reason=PressureEvictionDryRun\n",
				"kubectl get events -A --field-selector reason=EvictedPodDeletedDryRun\n",
				"not installed in dry-run; it comes with dryRun=false"},
			[]string{"reason=PressureEviction\n", "reason=EvictedPodDeleted\n", "EVICTS", "agent.dryRun=false", "is installed:"}},
		{"dryRun=false: an evicting agent and janitor, and the avoidance policy announced", kubeVersion, []string{live},
			[]string{"EVICTS pods", "kubectl get events -A --field-selector reason=PressureEviction\n",
				"kubectl get events -A --field-selector reason=EvictedPodDeleted\n",
				"A MutatingAdmissionPolicy (pressure-agent-avoid-evicted-node) is installed"},
			[]string{"PressureEvictionDryRun", "DRY", "EvictedPodDeletedDryRun"}},
		{"a dry-run agent alone: its PressureEvictionDryRun events, never PressureEviction's", kubeVersion,
			[]string{live, "agent.dryRun=true"},
			[]string{"DRY-RUN mode", "kubectl get events -A --field-selector reason=PressureEvictionDryRun\n",
				"--set agent.dryRun=false", "reason=EvictedPodDeleted\n"},
			[]string{"reason=PressureEviction\n", "EVICTS", "DRY RUN (dryRun=true", "is installed:"}},
		{"a dry-run janitor alone says it deletes nothing and where its reports are", kubeVersion,
			[]string{live, "janitor.config.dryRun=true"},
			[]string{"pressure-janitor runs in DRY-RUN mode", "deletes nothing", "reason=EvictedPodDeletedDryRun\n",
				"--set janitor.config.dryRun=false"},
			[]string{"reason=EvictedPodDeleted\n"}},
		{"on 1.35 the janitor's webhook is announced, and the policy a cluster upgrade to 1.36 brings", "1.35.2", []string{live},
			[]string{"has no MutatingAdmissionPolicy v1 (1.36+), so the janitor's replicas\nserve the avoidance as a mutating admission webhook",
				"After the cluster is upgraded to 1.36, the next helm upgrade installs\nthe MutatingAdmissionPolicy instead",
				"agent.avoidance.webhook.enabled=false"},
			[]string{"is installed:", "policy is not installed"}},
		{"on 1.35 in dry-run the webhook is announced for dryRun=false", "1.35.2", nil,
			[]string{"has no MutatingAdmissionPolicy v1 (1.36+)", "the janitor's webhook that applies it on this version comes with dryRun=false"},
			[]string{"is installed:", "serve the avoidance"}},
		{"on 1.35 without the webhook nothing applies avoidances, and the notes say so", "1.35.2",
			[]string{live, "agent.avoidance.webhook.enabled=false"},
			[]string{"policy is not installed,\nnor the janitor's webhook", "after the cluster is upgraded to 1.36, the next helm upgrade installs the policy"},
			[]string{"is installed:", "serve the avoidance"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			notes := renderNotes(t, tc.kv, tc.set...)
			for _, w := range append(tc.want, "kubectl pressure explain <node>", "kubectl pressure why <pod>",
				"install.md#3-the-kubectl-plugin", "reason=KubeletConfigNotFound", "install.md#managed-nodes") {
				if !strings.Contains(notes, w) {
					t.Errorf("notes do not say %q:\n%s", w, notes)
				}
			}
			for _, n := range tc.never {
				if strings.Contains(notes, n) {
					t.Errorf("notes say %q:\n%s", n, notes)
				}
			}
			// Every docs reference is a full URL, to a doc (and heading) that exists.
			if bare := regexp.MustCompile(`(^|[^/])docs/[a-z-]+\.md`).FindString(notes); bare != "" {
				t.Errorf("notes name %q by a repository path; want full URLs throughout:\n%s", bare, notes)
			}
			urls := docURL.FindAllStringSubmatch(notes, -1)
			if len(urls) < 3 {
				t.Errorf("notes link %d docs, want install, explain and operations:\n%s", len(urls), notes)
			}
			for _, u := range urls {
				doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", u[1]))
				if err != nil {
					t.Errorf("notes link %s: %v", u[0], err)
					continue
				}
				if u[2] != "" && !strings.Contains(headingAnchors(string(doc)), " "+u[2][1:]+" ") {
					t.Errorf("notes link %s: docs/%s has no heading %s", u[0], u[1], u[2])
				}
			}
		})
	}
}

// headingAnchors returns the GitHub anchors of doc's headings, space-separated and space-padded.
func headingAnchors(doc string) string {
	var b strings.Builder
	b.WriteString(" ")
	for _, line := range strings.Split(doc, "\n") {
		h := strings.TrimLeft(line, "#")
		if h == line || !strings.HasPrefix(h, " ") {
			continue
		}
		a := strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
				return r
			case r == ' ':
				return '-'
			}
			return -1
		}, strings.ToLower(strings.TrimSpace(h)))
		b.WriteString(a + " ")
	}
	return b.String()
}
