package cli

// The output contract of every subcommand (issue 34): each accepts the same -o set (text, wide, json,
// yaml, jsonpath=..., go-template=...), json and yaml carry apiVersion and kind, an unknown format is
// refused naming the value and the accepted set, and the shared flags have the same names and
// defaults. The live subcommands run on a real kube-apiserver + etcd (level 1) with a node whose
// "kubelet" is a Summary/configz server behind the apiserver's real node proxy.

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// contractFormats are the formats every subcommand must accept.
var contractFormats = []string{"text", "wide", "json", "yaml", "jsonpath={.kind}", "go-template={{.kind}}"}

func TestEverySubcommandAcceptsEveryOutputFormat(t *testing.T) {
	cp, cs, ctx := controlPlane(t, 5*time.Minute)
	ip, port := clustertest.KubeletServer(t, cp, clustertest.SummaryKubelet("n1", nodeMemory, 1<<30, 0, nodeConfigz))
	createNode(ctx, t, cs, "n1", ip, port)
	// n2 does not match the selector below: its kubelet never answers, so asking it would show as an
	// error row (and a partial answer) in nodes' output.
	silentIP, silentPort := clustertest.SilentKubelet(t, cp)
	createNode(ctx, t, cs, "n2", silentIP, silentPort)
	for name, pool := range map[string]string{"n1": "a", "n2": "b"} {
		patch := []byte(`{"metadata":{"labels":{"pool":"` + pool + `"}}}`)
		if _, err := cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const ns = "shop"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kc := []string{"--kubeconfig", cp.Kubeconfig()}
	dir := t.TempDir()
	seed := filepath.Join("testdata", "snapshots", "seed")
	for _, tc := range []struct {
		name string
		args func(format string) []string
		kind string
		// stdoutText says whether the text formats print on stdout (record says its progress on stderr).
		stdoutText bool
	}{
		{"explain live", func(string) []string { return append(kc, "explain", "n1") }, KindExplainResult, true},
		{"explain snapshot", func(string) []string { return []string{"explain", "--snapshot", seed} }, KindExplainResult, true},
		{"snapshot", func(f string) []string {
			return append(kc, "snapshot", "n1", "--out", filepath.Join(dir, "snap-"+safeName(f)))
		}, KindSnapshotResult, true},
		{"record", func(f string) []string {
			return append(kc, "record", "n1", "--every", "100ms", "--for", "300ms", "--out", filepath.Join(dir, "rec-"+safeName(f)))
		}, KindRecording, false},
		{"simulate", func(string) []string { return []string{"simulate", exampleScenario} }, KindSimulationResult, true},
		{"why", func(string) []string { return append(kc, "why", "web", "-n", ns) }, KindWhyResult, true},
		{"nodes", func(string) []string { return append(kc, "nodes", "-l", "pool=a") }, KindNodeList, true},
		{"version", func(string) []string { return []string{"version"} }, KindVersion, true},
	} {
		for _, format := range contractFormats {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				out, errOut, err := runCLIStderr(t, append(tc.args(format), "-o", format)...)
				if err != nil {
					t.Fatalf("-o %s: %v\nstderr: %s", format, err, errOut)
				}
				checkContractOutput(t, format, tc.kind, tc.stdoutText, out, errOut)
				if tc.name == "nodes" && (strings.Contains(out, "n2") || strings.Contains(errOut, "n2")) {
					t.Errorf("nodes -l pool=a -o %s mentions n2, which does not match:\n%s%s", format, out, errOut)
				}
			})
		}
		t.Run(tc.name+"/xml", func(t *testing.T) {
			_, err := runCLI(t, append(tc.args("xml"), "-o", "xml")...)
			want := `--output "xml": unknown format; want one of ` + outputSet
			if err == nil || err.Error() != want {
				t.Errorf("-o xml: error %v, want %q", err, want)
			}
		})
	}
}

// checkContractOutput checks one subcommand's output in one format.
func checkContractOutput(t *testing.T, format, kind string, stdoutText bool, out, errOut string) {
	t.Helper()
	switch format {
	case "text", "wide":
		if stdoutText && strings.TrimSpace(out) == "" || !stdoutText && strings.TrimSpace(errOut) == "" {
			t.Errorf("-o %s: nothing printed (stdout %q, stderr %q)", format, out, errOut)
		}
		if strings.Contains(out, `"apiVersion"`) || strings.Contains(out, "apiVersion:") {
			t.Errorf("-o %s printed a machine format:\n%s", format, out)
		}
	case "json", "yaml":
		var tm metav1.TypeMeta
		var err error
		if format == "json" {
			err = json.Unmarshal([]byte(out), &tm)
		} else {
			err = yaml.Unmarshal([]byte(out), &tm)
		}
		if err != nil {
			t.Fatalf("-o %s: %v\n%s", format, err, out)
		}
		if tm.APIVersion != APIVersion || tm.Kind != kind {
			t.Errorf("-o %s: apiVersion %q kind %q, want %q %q", format, tm.APIVersion, tm.Kind, APIVersion, kind)
		}
		if format == "json" && !strings.HasPrefix(out, "{\n  \"apiVersion\": \""+APIVersion+"\",\n  \"kind\": \""+kind+"\",") {
			t.Errorf("-o json does not start with apiVersion and kind:\n%.200s", out)
		}
	default:
		if out != kind {
			t.Errorf("-o %s = %q, want %q", format, out, kind)
		}
	}
}

// safeName makes a format usable in a file name.
func safeName(format string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r
		}
		return '_'
	}, format)
}

// TestSharedFlagsHaveOneNameAndDefault checks the flags several subcommands share: -o/--output
// defaults to text everywhere, --kubelet-timeout to 10s on every subcommand that asks a kubelet.
func TestSharedFlagsHaveOneNameAndDefault(t *testing.T) {
	root := NewRootCommand(genericiooptions.NewTestIOStreamsDiscard())
	live := map[string]bool{"explain": true, "snapshot": true, "record": true, "nodes": true}
	seen := 0
	for _, cmd := range root.Commands() {
		name := cmd.Name()
		if name == "help" || name == "completion" {
			continue
		}
		seen++
		o := cmd.Flags().Lookup("output")
		if o == nil || o.Shorthand != "o" || o.DefValue != OutputText {
			t.Errorf("%s: -o/--output %+v, want shorthand o and default text", name, o)
		}
		k := cmd.Flags().Lookup("kubelet-timeout")
		switch {
		case live[name] && (k == nil || k.DefValue != "10s"):
			t.Errorf("%s: --kubelet-timeout %+v, want default 10s", name, k)
		case !live[name] && k != nil:
			t.Errorf("%s: --kubelet-timeout, but it asks no kubelet", name)
		}
	}
	if seen != 7 {
		t.Errorf("%d subcommands, want 7 (explain, snapshot, record, simulate, why, nodes, version): update this test", seen)
	}
	nodes, _, err := root.Find([]string{"nodes"})
	if err != nil {
		t.Fatal(err)
	}
	if l := nodes.Flags().Lookup("selector"); l == nil || l.Shorthand != "l" {
		t.Errorf("nodes: -l/--selector %+v, want it", l)
	}
}

// TestInstallDocListsEverySubcommand keeps docs/install.md's row of the plugin listing the subcommands
// the plugin has.
func TestInstallDocListsEverySubcommand(t *testing.T) {
	doc := readFile(t, filepath.Join("..", "..", "docs", "install.md"))
	_, row, ok := strings.Cut(doc, "| `kubectl-pressure` (")
	if !ok {
		t.Fatal("docs/install.md: no row \"| `kubectl-pressure` (subcommands) |\"")
	}
	row, _, _ = strings.Cut(row, ")")
	var want []string
	for _, cmd := range NewRootCommand(genericiooptions.NewTestIOStreamsDiscard()).Commands() {
		if name := cmd.Name(); name != "help" && name != "completion" {
			want = append(want, name)
		}
	}
	listed := strings.Split(row, ", ")
	sort.Strings(listed)
	sort.Strings(want)
	if strings.Join(listed, ",") != strings.Join(want, ",") {
		t.Errorf("docs/install.md lists the plugin's subcommands as %v, the plugin has %v", listed, want)
	}
}
