package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// secrets are planted in every pod of a snapshot; none may survive redaction.
var secrets = []string{"s3cr3t-env-value", "registry.internal/app:1", "--password=hunter2", "team-label-value",
	"annotation-value", "/host/secret/path", "my-secret-name", "https://token@git.example/repo",
	// issue 30, finding 5: environment variable names, Secret and PVC volume names, claim names (in
	// the pod and in the Summary's volume stats) and the kubelet's static pod URL and its headers.
	"STRIPE_LIVE_KEY_NAME", "db-credentials-vol", "customer-pii-vol", "customer-pii-claim",
	"Bearer static-pod-token", "https://user:pw-static@pods.example/manifests"}

func plantSecrets(t *testing.T, f map[string]string) {
	t.Helper()
	var list corev1.PodList
	if err := json.Unmarshal([]byte(f[FilePods]), &list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		p := &list.Items[i]
		p.Labels = map[string]string{"team": "team-label-value"}
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations["example.com/note"] = "annotation-value"
		for j := range p.Spec.Containers {
			c := &p.Spec.Containers[j]
			c.Image, c.Args = "registry.internal/app:1", []string{"--password=hunter2"}
			c.Env = append(c.Env, corev1.EnvVar{Name: "TOKEN", Value: "s3cr3t-env-value"},
				corev1.EnvVar{Name: "STRIPE_LIVE_KEY_NAME", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "my-secret-name"}, Key: "k"}}})
		}
		p.Spec.Volumes = append(p.Spec.Volumes,
			corev1.Volume{Name: "db-credentials-vol", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "my-secret-name"}}},
			corev1.Volume{Name: "customer-pii-vol", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: "customer-pii-claim"}}})
		p.Spec.Volumes = append(p.Spec.Volumes,
			corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/host/secret/path"}}},
			corev1.Volume{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "my-secret-name"}}},
			corev1.Volume{Name: "git", VolumeSource: corev1.VolumeSource{GitRepo: &corev1.GitRepoVolumeSource{ //nolint:staticcheck // still counted by the kubelet
				Repository: "https://token@git.example/repo"}}})
	}
	b, err := json.MarshalIndent(&list, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	f[FilePods] = string(b)

	var summary statsv1alpha1.Summary
	if err := json.Unmarshal([]byte(f[FileSummary]), &summary); err != nil {
		t.Fatal(err)
	}
	for i := range summary.Pods {
		summary.Pods[i].VolumeStats = append(summary.Pods[i].VolumeStats,
			statsv1alpha1.VolumeStats{Name: "db-credentials-vol"},
			statsv1alpha1.VolumeStats{Name: "customer-pii-vol", PVCRef: &statsv1alpha1.PVCReference{Name: "customer-pii-claim", Namespace: "x"}})
	}
	if b, err = json.MarshalIndent(&summary, "", "  "); err != nil {
		t.Fatal(err)
	}
	f[FileSummary] = string(b)

	var cfg map[string]any
	if err := json.Unmarshal([]byte(f[FileKubeletConfig]), &cfg); err != nil {
		t.Fatal(err)
	}
	inner := cfg
	if k, ok := cfg["kubeletconfig"].(map[string]any); ok { // the /configz answer, or a bare configuration
		inner = k
	}
	inner["staticPodURL"] = "https://user:pw-static@pods.example/manifests"
	inner["staticPodURLHeader"] = map[string][]string{"Authorization": {"Bearer static-pod-token"}}
	if b, err = json.MarshalIndent(cfg, "", "  "); err != nil {
		t.Fatal(err)
	}
	f[FileKubeletConfig] = string(b)
}

func TestRedactedSnapshotKeepsTheDecisionAndDropsTheRest(t *testing.T) {
	for _, c := range []string{"seed", "soft-and-disk", "healthy"} {
		t.Run(c, func(t *testing.T) {
			src := copyCase(t, c, func(f map[string]string) { plantSecrets(t, f) })
			s, err := LoadSnapshotDir(os.DirFS(src), src)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Redact(); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "new", "snap")
			if err := s.WriteDir(dir); err != nil {
				t.Fatal(err)
			}
			checkMode(t, dir, 0o700)
			for _, name := range snapshotFiles {
				checkMode(t, filepath.Join(dir, name), 0o600)
				data, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				for _, secret := range secrets {
					if strings.Contains(string(data), secret) {
						t.Errorf("%s still holds %q after redaction", name, secret)
					}
				}
			}
			if strings.Contains(readFile(t, filepath.Join(dir, FilePods)), `"TOKEN"`) {
				t.Errorf("redaction kept an environment variable's name")
			}
			before, after := explainJSONRaw(t, src), explainJSONRaw(t, dir)
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("explain differs after redaction (-before +after):\n%s", diff)
			}
		})
	}
}

func TestWriteDirTightensAnExistingFile(t *testing.T) {
	src := filepath.Join("testdata", "snapshots", "seed")
	s, err := LoadSnapshotDir(os.DirFS(src), src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FilePods), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	checkMode(t, filepath.Join(dir, FilePods), 0o600)
}

// copyCase copies a testdata snapshot into a temporary directory and applies edit to its files.
func copyCase(t *testing.T, name string, edit func(map[string]string)) string {
	t.Helper()
	files := map[string]string{}
	for _, f := range snapshotFiles {
		files[f] = readFile(t, filepath.Join("testdata", "snapshots", name, f))
	}
	edit(files)
	dir := t.TempDir()
	for f, data := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s mode %o, want %o", path, got, want)
	}
}

// explainJSONRaw returns explain's JSON report of a snapshot as a map, without its source and the
// warnings' directory names.
func explainJSONRaw(t *testing.T, dir string) map[string]any {
	t.Helper()
	out, err := runCLI(t, "explain", "--snapshot", dir, "-o", "json")
	if err != nil {
		t.Fatalf("explain --snapshot %s: %v", dir, err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(out, dir, "DIR")), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "source")
	return m
}

func TestRedactionKeepsTheKubeletsEvictionEvidence(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 1, 22, 34, 18, 0, time.UTC))
	evicted := corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory. ",
		Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet",
			LastTransitionTime: at}, {Type: corev1.PodReady, Status: corev1.ConditionFalse, Message: "private detail"}}}}
	got := RedactPod(&evicted).Status
	if got.Reason != "Evicted" || got.Message != evicted.Status.Message {
		t.Errorf("reason %q message %q, want the kubelet's", got.Reason, got.Message)
	}
	if len(got.Conditions) != 1 || got.Conditions[0].Type != corev1.DisruptionTarget || !got.Conditions[0].LastTransitionTime.Equal(&at) {
		t.Errorf("conditions %+v, want only DisruptionTarget with its time", got.Conditions)
	}
	other := corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "DeadlineExceeded", Message: "private detail"}}
	if got := RedactPod(&other).Status; got.Reason != "" || got.Message != "" {
		t.Errorf("a pod that was not evicted keeps reason %q message %q", got.Reason, got.Message)
	}
}
