package cli

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/explain"
)

// copySeed copies the seed snapshot into a temporary directory and applies edit to its files.
func copySeed(t *testing.T, edit func(files map[string]string)) string {
	t.Helper()
	return copyCase(t, "seed", edit)
}

func replace(t *testing.T, files map[string]string, name, old, new string) {
	t.Helper()
	if !strings.Contains(files[name], old) {
		t.Fatalf("%s does not contain %q", name, old)
	}
	files[name] = strings.Replace(files[name], old, new, 1)
}

func TestSnapshotDirErrorsNameFileAndField(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, f map[string]string)
		want []string // substrings of the error; the dir is prepended to the first
	}{
		{"missing summary is an error naming the file",
			func(t *testing.T, f map[string]string) { delete(f, FileSummary) },
			[]string{"summary.json", "no such file"}},
		{"malformed pods JSON names the file, line and column",
			func(t *testing.T, f map[string]string) { f[FilePods] = f[FilePods][:200] },
			[]string{"pods.json: line ", ", column ", "unexpected end of JSON input"}},
		{"a string where the summary has a number names the field",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileSummary, `"availableBytes": 52428800`, `"availableBytes": "50Mi"`)
			},
			[]string{"summary.json: line ", "field node.memory.availableBytes", "cannot unmarshal string"}},
		{"a bad quantity in the node capacity names the field",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileNode, `"memory": "16386048Ki"`, `"memory": "16 GB"`)
			},
			[]string{"node.json: field status.capacity.memory", "quantities must match"}},
		{"an unknown signal in the kubelet config names the file and setting",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileKubeletConfig, `"memory.available": "100Mi"`, `"memory.free": "100Mi"`)
			},
			[]string{"kubelet-config.json: ", `evictionHard["memory.free"]`, "unsupported eviction signal memory.free"}},
		{"a summary without node name is not a summary",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FileSummary, `"nodeName": "seed-node"`, `"nodeName": ""`)
			},
			[]string{"summary.json: field node.nodeName", "not a kubelet Summary"}},
		{"a pod list of the wrong kind names the field",
			func(t *testing.T, f map[string]string) {
				replace(t, f, FilePods, `"kind": "PodList"`, `"kind": "Pod"`)
			},
			[]string{"pods.json: field kind", `"Pod", want "PodList"`}},
		{"an empty kubelet config is an error naming the file",
			func(t *testing.T, f map[string]string) { f[FileKubeletConfig] = "\n" },
			[]string{"kubelet-config.json: empty file"}},
		{"an empty pods.json says what is accepted",
			func(t *testing.T, f map[string]string) { f[FilePods] = " \n" },
			[]string{"pods.json: empty file, want a JSON object (a v1.PodList, or a v1 List of pods", "or a JSON array of pods"}},
		{"a truncated kubelet config in JSON is reported as JSON, with its line",
			func(t *testing.T, f map[string]string) { f[FileKubeletConfig] = f[FileKubeletConfig][:60] },
			[]string{"kubelet-config.json: not valid JSON: line ", "unexpected end of JSON input"}},
		{"a kubelet config of another kind names the file",
			func(t *testing.T, f map[string]string) { f[FileKubeletConfig] = `{"kind": "Pod", "apiVersion": "v1"}` },
			[]string{"kubelet-config.json", `kind "Pod" is not KubeletConfiguration`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copySeed(t, func(f map[string]string) { tc.edit(t, f) })
			_, err := runCLI(t, "explain", "--snapshot", dir)
			if err == nil {
				t.Fatalf("explain succeeded, want an error containing %q", tc.want)
			}
			msg := err.Error()
			want := append([]string{filepath.Join(dir, strings.SplitN(tc.want[0], ":", 2)[0])}, tc.want...)
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestExplainRefusesMismatchedNodeAndUnknownOutput(t *testing.T) {
	dir := filepath.Join("testdata", "snapshots", "seed")
	if _, err := runCLI(t, "explain", "other-node", "--snapshot", dir); err == nil ||
		!strings.Contains(err.Error(), `snapshot testdata/snapshots/seed is of node "seed-node"`) {
		t.Errorf("explain other-node --snapshot seed: error %v, want one naming both nodes", err)
	}
	if _, err := runCLI(t, "explain", "--snapshot", dir, "-o", "xml"); err == nil || !strings.Contains(err.Error(), `--output "xml"`) {
		t.Errorf("explain -o xml: error %v, want one naming the format", err)
	}
	if _, err := runCLI(t, "explain"); err == nil || !strings.Contains(err.Error(), "--snapshot DIR") {
		t.Errorf("explain without node or snapshot: error %v, want usage hint", err)
	}
}

func TestSnapshotWriteDirRoundTrips(t *testing.T) {
	src := filepath.Join("testdata", "snapshots", "seed")
	s, err := LoadSnapshotDir(os.DirFS(src), src)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "new", "snap")
	if err := s.WriteDir(dir); err != nil {
		t.Fatalf("WriteDir: %v", err)
	}
	back, err := LoadSnapshotDir(os.DirFS(dir), dir)
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	if back.Node.Name != "seed-node" || len(back.Pods.Items) != 3 || len(back.Summary.Pods) != 3 || !back.KubeletConfig.Effective {
		t.Errorf("reloaded snapshot lost content: node %q, %d pods, %d pod stats, effective %v",
			back.Node.Name, len(back.Pods.Items), len(back.Summary.Pods), back.KubeletConfig.Effective)
	}
}

func TestSnapshotPathErrorsAreOneClearLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "snap.tar")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nope")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a missing directory", []string{"explain", "--snapshot", missing},
			"snapshot " + missing + ": no such directory: " + snapshotDirWanted},
		{"a file instead of a directory", []string{"explain", "--snapshot", file},
			"snapshot " + file + ": a file, not a directory: " + snapshotDirWanted},
		{"no argument names every way to say what to explain", []string{"explain"},
			"nothing to explain: give a NODE (live, through the apiserver), --snapshot DIR (a directory kubectl pressure " +
				"snapshot wrote) or --local (on the node itself, from its cgroups and kubelet config)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runCLI(t, tc.args...)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want the one line %q", err, tc.want)
			}
		})
	}
}

func TestLoadSnapshotDirReportsEveryMissingFile(t *testing.T) {
	_, err := LoadSnapshotDir(os.DirFS(t.TempDir()), "empty")
	var fe *FileError
	if !errors.As(err, &fe) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("error %v, want a FileError wrapping fs.ErrNotExist", err)
	}
	for _, name := range snapshotFiles {
		if !strings.Contains(err.Error(), filepath.Join("empty", name)) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
}

// FuzzParseSnapshot replaces one file of the seed snapshot (which % 4 picks it) with data and checks
// the invariant: no panic; an error with a message, or a snapshot that explains and renders.
func FuzzParseSnapshot(f *testing.F) {
	seed := readSnapshot(f, "seed")
	for _, c := range []string{"seed", "healthy", "soft-and-disk"} {
		files := readSnapshot(f, c)
		for i, name := range snapshotFiles {
			f.Add(uint8(i), files[name])
		}
	}
	f.Add(uint8(2), []byte(`{"node":{"nodeName":"seed-node","memory":{"availableBytes":1e30}}}`))
	f.Add(uint8(3), []byte(`{"kubeletconfig":{"evictionHard":{"memory.available":"1e9999"}}}`))
	f.Add(uint8(1), []byte(`{}`))
	f.Add(uint8(1), []byte(`[{"metadata":{"uid":"x"}},{"metadata":{"uid":"x"}}]`))
	f.Add(uint8(1), []byte(`{"kind":"List","apiVersion":"v1","items":[{"kind":"Service"}]}`))
	f.Add(uint8(0), []byte(`{"metadata":{"name":"n"},"status":{"capacity":{"memory":"99999999Ei","cpu":"-1"},"nodeInfo":{"kubeletVersion":"v1.30.0"}}}`))
	f.Add(uint8(2), []byte(`{"node":{"nodeName":"seed-node","fs":{"availableBytes":18446744073709551615}},"pods":[{"podRef":{"uid":"a"}},{"podRef":{"uid":"a"}}]}`))
	f.Add(uint8(3), []byte(`{"kubeletconfig":{"evictionHard":{"memory.available":"99999999Ei"},"bogus":1}}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		raw := map[string][]byte{}
		for k, v := range seed {
			raw[k] = v
		}
		raw[snapshotFiles[int(which)%len(snapshotFiles)]] = data
		s, err := ParseSnapshot(raw, nil)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		uids := map[string]bool{}
		for _, p := range s.Pods.Items {
			if p.UID != "" && uids[string(p.UID)] {
				t.Fatalf("pods with one uid %q accepted", p.UID)
			}
			uids[string(p.UID)] = true
		}
		in, err := ExplainInput(s, "fuzz", time.Time{})
		if err != nil {
			return
		}
		for _, v := range in.Capacity {
			if v < 0 {
				t.Fatalf("negative capacity accepted: %v", in.Capacity)
			}
		}
		r := explain.Build(in)
		if err := explain.Text(io.Discard, r); err != nil {
			t.Fatalf("Text: %v", err)
		}
		if err := explain.JSON(io.Discard, r); err != nil {
			t.Fatalf("JSON: %v", err)
		}
	})
}

func readSnapshot(tb testing.TB, name string) map[string][]byte {
	tb.Helper()
	out := map[string][]byte{}
	for _, file := range snapshotFiles {
		data, err := os.ReadFile(filepath.Join("testdata", "snapshots", name, file))
		if err != nil {
			tb.Fatal(err)
		}
		out[file] = data
	}
	return out
}
