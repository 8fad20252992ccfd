package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kube-pressure/pressure/internal/explain"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"

	"github.com/kube-pressure/pressure/internal/golden"
	"github.com/kube-pressure/pressure/internal/testenv"
)

const (
	procFixture   = "../source/procfs/testdata/proc-k6.18.44"
	cgroupFixture = "../source/cgroupfs/testdata/"
	// missingDir stands for a kubelet root dir and runtime root that do not exist (statfs of a real
	// directory would make the golden output change with the disk).
	missingDir = "testdata/local/missing"
)

// fixedNow stamps the fixture observations, so stats ages are 0s and the output is stable.
var fixedNow = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

func fixtureOptions(cgroup, kubeletConfig string) LocalOptions {
	return LocalOptions{Node: "fixture-node", KubeletConfig: kubeletConfig, ProcRoot: procFixture,
		CgroupRoot: cgroupFixture + cgroup, KubeletRootDir: missingDir + "/kubelet", RuntimeRoot: missingDir + "/containerd"}
}

// fixturePods are the pods of the cgroup fixtures (same UIDs), one per QoS class, plus one whose
// cgroup is missing.
func fixturePods() []corev1.Pod {
	mem := func(q string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}
	}
	pod := func(name, uid string, res corev1.ResourceRequirements) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(uid)},
			Spec:   corev1.PodSpec{NodeName: "fixture-node", Containers: []corev1.Container{{Name: "app", Resources: res}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	guaranteed := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourceCPU: resource.MustParse("100m")}
	return []corev1.Pod{
		pod("guaranteed", "11111111-2222-3333-4444-555555555555", corev1.ResourceRequirements{Requests: guaranteed, Limits: guaranteed}),
		pod("burstable", "66666666-7777-8888-9999-aaaaaaaaaaaa", corev1.ResourceRequirements{Requests: mem("100Mi")}),
		pod("besteffort", "bbbbbbbb-cccc-dddd-eeee-ffffffffffff", corev1.ResourceRequirements{}),
		pod("no-cgroup", "00000000-0000-0000-0000-000000000000", corev1.ResourceRequirements{}),
	}
}

func renderLocal(t *testing.T, in explain.Input, format string) string {
	t.Helper()
	var out, errOut bytes.Buffer // the golden files are stdout; machine formats repeat warnings on stderr
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	if err := render(streams, explain.Build(in), format); err != nil {
		t.Fatalf("render %s: %v", format, err)
	}
	return out.String()
}

func TestExplainLocalOnFixtureTreesMatchesGolden(t *testing.T) {
	cases := []struct {
		name, cgroup, config string
		pods                 bool
		formats              []string
	}{
		{"local-v1-cgroupfs", "cgroupv1-cgroupfs", "", false, []string{"text", "json", "yaml"}},
		{"local-v2-cgroupfs", "cgroupv2-cgroupfs", "", false, []string{"text"}},
		{"local-v2-systemd-config-pods", "cgroupv2-systemd", "testdata/local/kubelet-config.yaml", true, []string{"text", "json"}},
	}
	for _, c := range cases {
		for _, format := range c.formats {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				in, err := LocalInput(fixtureOptions(c.cgroup, c.config), fixedNow)
				if err != nil {
					t.Fatalf("LocalInput: %v", err)
				}
				if c.pods {
					AddLocalPods(&in, fixturePods())
				}
				got := renderLocal(t, in, format)
				path := filepath.Join("testdata", "golden", c.name+"."+map[string]string{"text": "txt", "json": "json", "yaml": "yaml"}[format])
				golden.Check(t, path, got)
			})
		}
	}
}

func TestExplainLocalWithoutKubeletRootDirSaysNodefsIsNotObserved(t *testing.T) {
	in, err := LocalInput(fixtureOptions("cgroupv2-cgroupfs", ""), fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	r := explain.Build(in)
	var nodefs []string
	for _, row := range r.Signals {
		if strings.HasPrefix(row.Signal, "nodefs.") {
			nodefs = append(nodefs, row.Signal)
			if row.Observed || row.Available != "" {
				t.Errorf("%s: observed %t available %q, want not observed (absent is not zero)", row.Signal, row.Observed, row.Available)
			}
		}
	}
	if len(nodefs) != 2 {
		t.Errorf("nodefs rows %q, want nodefs.available and nodefs.inodesFree (default thresholds)", nodefs)
	}
	if !containsLine(r.Warnings, "nodefs is not observed: kubelet root dir "+missingDir+"/kubelet does not exist") {
		t.Errorf("warnings %q: want one saying nodefs is not observed", r.Warnings)
	}
	if _, ok := in.Capacity["ephemeral-storage"]; ok {
		t.Errorf("capacity %v: ephemeral-storage without nodefs", in.Capacity)
	}
}

func TestExplainLocalRejectsAnInvalidKubeletConfigNamingTheFile(t *testing.T) {
	for _, file := range []string{"testdata/local/bad-kubelet-config.yaml", "testdata/local/no-such-config.yaml"} {
		_, err := LocalInput(fixtureOptions("cgroupv2-cgroupfs", file), fixedNow)
		if err == nil || !strings.Contains(err.Error(), file) {
			t.Errorf("config %s: error %v, want one naming the file", file, err)
		}
	}
	_, err := LocalInput(fixtureOptions("cgroupv2-cgroupfs", "testdata/local/no-such-config.yaml"), fixedNow)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing config: error %v, want it to wrap os.ErrNotExist", err)
	}
}

func TestExplainLocalRejectsSnapshotAndNodeArgument(t *testing.T) {
	if _, err := runCLI(t, "explain", "--local", "--snapshot", "x"); !errors.Is(err, errLocalWithSnapshot) {
		t.Errorf("--local --snapshot: error %v, want %v", err, errLocalWithSnapshot)
	}
	if _, err := runCLI(t, "explain", "--local", "node-1"); err == nil || !strings.Contains(err.Error(), "--node-name") {
		t.Errorf("--local node-1: error %v, want one pointing to --node-name", err)
	}
}

// On this machine's real /proc and /sys/fs/cgroup: memory.available is observed with MemTotal as its
// capacity, and memory capacity in the allocatable math is MemTotal.
func TestExplainLocalOnThisHostReportsMemoryAvailableWithMemTotal(t *testing.T) {
	if _, err := (cgroupfs.Detector{}).Detect(); err != nil {
		testenv.SkipOrFail(t, "no readable cgroup memory controller at %s on this host: %v", cgroupfs.DefaultRoot, err)
	}
	out, err := runCLI(t, "explain", "--local", "-o", "json", "--node-name", "this-host")
	if err != nil {
		t.Fatalf("explain --local: %v", err)
	}
	memTotal := readMemTotal(t)
	var r struct {
		Node            string `json:"node"`
		Source          string `json:"source"`
		AllocatableMath []struct{ Resource, Capacity string }
		Signals         []struct {
			Signal, Available, Capacity string
			Observed                    bool
		} `json:"signals"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if r.Node != "this-host" || r.Source != LocalSource {
		t.Errorf("node %q source %q, want this-host local", r.Node, r.Source)
	}
	found := false
	for _, s := range r.Signals {
		if s.Signal != "memory.available" {
			continue
		}
		found = true
		avail, err := strconv.ParseInt(s.Available, 10, 64)
		if !s.Observed || err != nil || avail <= 0 || avail > memTotal {
			t.Errorf("memory.available observed %t available %q: want 0 < available <= MemTotal %d", s.Observed, s.Available, memTotal)
		}
		if s.Capacity != strconv.FormatInt(memTotal, 10) {
			t.Errorf("memory.available capacity %s, want MemTotal %d", s.Capacity, memTotal)
		}
	}
	if !found {
		t.Errorf("no memory.available row in %s", out)
	}
	for _, a := range r.AllocatableMath {
		if a.Resource == "memory" && a.Capacity != strconv.FormatInt(memTotal, 10) {
			t.Errorf("allocatable memory capacity %s, want MemTotal %d", a.Capacity, memTotal)
		}
	}
	text, err := runCLI(t, "explain", "--local")
	if err != nil {
		t.Fatalf("explain --local (text): %v", err)
	}
	if !strings.Contains(text, "memory.available") || !strings.Contains(text, "SIGNALS NOW") {
		t.Errorf("text output lacks the memory.available row:\n%s", text)
	}
	t.Logf("explain --local on this host:\n%s", text)
}

// readMemTotal reads MemTotal (bytes) from /proc/meminfo independently of internal/source.
func readMemTotal(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 3 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("/proc/meminfo: no MemTotal")
	return 0
}

func containsLine(lines []string, sub string) bool {
	for _, l := range lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}
