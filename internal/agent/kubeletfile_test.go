package agent

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kubeletYAML is a kubelet config file as kubeadm writes it, with memory.available<mem.
func kubeletYAML(mem string) string {
	return "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\n" +
		"clusterDNS:\n- 10.96.0.10\nclusterDomain: cluster.local\nevictionHard:\n  memory.available: " + mem + "\n" +
		"evictionSoft:\n  nodefs.available: 15%\nevictionSoftGracePeriod:\n  nodefs.available: 2m\n" +
		"kubeReserved:\n  memory: 1Gi\nstaticPodPath: /etc/kubernetes/manifests\n"
}

func TestKubeletFileParsesOnlyWhenTheBytesChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	k := &kubeletFile{Path: path}
	// Each step writes (or removes) the file, loads once and says what the load must give.
	steps := []struct {
		name       string
		change     func()
		wantMemory string // a threshold the result holds; "" when an error is wanted
		wantErr    func(error) bool
		wantParses int
	}{
		{name: "the first load parses", change: func() { write(kubeletYAML("200Mi")) }, wantMemory: "memory.available<200Mi", wantParses: 1},
		{name: "an unchanged file is not parsed again", change: func() {}, wantMemory: "memory.available<200Mi", wantParses: 1},
		{name: "a rewrite with the same bytes is not parsed again", change: func() { write(kubeletYAML("200Mi")) }, wantMemory: "memory.available<200Mi", wantParses: 1},
		{name: "a change of the same size is picked up at the next load", change: func() { write(kubeletYAML("400Mi")) }, wantMemory: "memory.available<400Mi", wantParses: 2},
		{name: "a removed file is an error at every load", change: func() { _ = os.Remove(path) },
			wantErr: func(err error) bool { return errors.Is(err, fs.ErrNotExist) }, wantParses: 2},
		{name: "the file back with its bytes is read again without a parse", change: func() { write(kubeletYAML("400Mi")) }, wantMemory: "memory.available<400Mi", wantParses: 2},
		{name: "an invalid file is the parse's error", change: func() { write("kind: [") },
			wantErr: func(err error) bool { return err != nil && strings.Contains(err.Error(), path) }, wantParses: 3},
		{name: "an unchanged invalid file gives the same error without a parse", change: func() {},
			wantErr: func(err error) bool { return err != nil && strings.Contains(err.Error(), path) }, wantParses: 3},
		{name: "the file fixed is picked up", change: func() { write(kubeletYAML("300Mi")) }, wantMemory: "memory.available<300Mi", wantParses: 4},
	}
	var lastErr error
	for _, st := range steps {
		st.change()
		got, err := k.Load()
		switch {
		case st.wantErr != nil && !st.wantErr(err):
			t.Errorf("%s: Load() error = %v", st.name, err)
		case st.wantErr == nil && err != nil:
			t.Errorf("%s: Load() error = %v, want none", st.name, err)
		case st.wantErr == nil && !strings.Contains(strings.Join(thresholdStrings(got), " "), st.wantMemory):
			t.Errorf("%s: Load() = %v, want %s among them", st.name, thresholdStrings(got), st.wantMemory)
		}
		if k.parses != st.wantParses {
			t.Errorf("%s: %d parses, want %d", st.name, k.parses, st.wantParses)
		}
		if st.name == "an unchanged invalid file gives the same error without a parse" && err.Error() != lastErr.Error() {
			t.Errorf("%s: error %q, the parse's was %q", st.name, err, lastErr)
		}
		lastErr = err
	}
}

func TestKubeletFileLoadsAsTheUncachedReadDid(t *testing.T) {
	for _, tc := range []struct{ name, content string }{
		{"valid", kubeletYAML("250Mi")},
		{"invalid YAML", "kind: ["},
		{"wrong kind", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: Pod\n"},
		{"bad threshold", strings.Replace(kubeletYAML("250Mi"), "250Mi", "lots", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			want, wantErr := uncachedKubeletFile(path)
			k := &kubeletFile{Path: path}
			for i := 0; i < 2; i++ {
				got, err := k.Load()
				if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
					t.Errorf("load %d: error %v, want %v", i, err, wantErr)
				}
				if strings.Join(thresholdStrings(got), " ") != strings.Join(thresholdStrings(want), " ") {
					t.Errorf("load %d: %v, want %v", i, thresholdStrings(got), thresholdStrings(want))
				}
			}
		})
	}
}

func TestKubeletRefresherOfAFileReusesTheStartsParse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(kubeletYAML("200Mi")), 0o600); err != nil {
		t.Fatal(err)
	}
	kf := &kubeletFile{Path: path}
	if _, err := kf.Load(); err != nil { // RunWithOptions' read at start
		t.Fatal(err)
	}
	r := &runner{cfg: Config{KubeletConfigFile: path, KubeletConfigRefresh: time.Minute}, kubeletFile: kf}
	k := r.kubeletRefresher(false, false)
	if _, err := k.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	if kf.parses != 1 {
		t.Errorf("%d parses after the start and one refresh of an unchanged file, want 1", kf.parses)
	}
}
