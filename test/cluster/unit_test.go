package cluster

import (
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

func TestMergeKubeletConfig(t *testing.T) {
	base := DefaultKubeletConfig("/n", net.IPv4(10, 213, 77, 1), "/n/ca.crt")
	tests := []struct {
		name     string
		override *kubeletv1beta1.KubeletConfiguration
		want     map[string]any // keys checked in the merged result
	}{
		{
			name:     "no override keeps harness defaults",
			override: nil,
			want: map[string]any{"failCgroupV1": false, "cgroupDriver": "cgroupfs", "oomScoreAdj": float64(0),
				"containerRuntimeEndpoint": "unix:///n/containerd.sock", "address": "10.213.77.1"},
		},
		{
			name: "test eviction settings are added and empty runtime endpoint does not erase the default",
			override: &kubeletv1beta1.KubeletConfiguration{
				EvictionHard:            map[string]string{"memory.available": "200Mi"},
				KubeReserved:            map[string]string{"memory": "22Gi"},
				KernelMemcgNotification: true,
			},
			want: map[string]any{"evictionHard": map[string]any{"memory.available": "200Mi"},
				"kubeReserved": map[string]any{"memory": "22Gi"}, "kernelMemcgNotification": true,
				"containerRuntimeEndpoint": "unix:///n/containerd.sock", "cgroupsPerQOS": true,
				"evictionPressureTransitionPeriod": "30s", "nodeStatusUpdateFrequency": "5s"},
		},
		{
			name: "set scalar wins over the default and nested auth merges key by key",
			override: &kubeletv1beta1.KubeletConfiguration{
				EvictionPressureTransitionPeriod: metav1.Duration{Duration: 5 * time.Second},
				CgroupsPerQOS:                    ptr.To(false),
				Authentication:                   kubeletv1beta1.KubeletAuthentication{Anonymous: kubeletv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(true)}},
			},
			want: map[string]any{"evictionPressureTransitionPeriod": "5s", "cgroupsPerQOS": false,
				"authentication": map[string]any{
					"anonymous": map[string]any{"enabled": true},
					"webhook":   map[string]any{"enabled": true, "cacheTTL": "0s"},
					"x509":      map[string]any{"clientCAFile": "/n/ca.crt"},
				}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := MergeKubeletConfig(base, tt.override)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := yaml.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.want {
				if diff := cmp.Diff(got[k], want); diff != "" {
					t.Errorf("key %s (-got +want):\n%s", k, diff)
				}
			}
		})
	}
}

func TestUnescapeMount(t *testing.T) {
	if got, want := unescapeMount(`/tmp/a\040b/c\134d`), `/tmp/a b/c\d`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func FuzzUnescapeMount(f *testing.F) {
	f.Add(`/a\040b`)
	f.Add(`\\\0`)
	f.Fuzz(func(t *testing.T, s string) {
		if got := unescapeMount(s); len(got) > len(s) {
			t.Errorf("unescaped %q is longer: %q", s, got)
		}
	})
}

func TestProcessStopEndsTheProcessByPID(t *testing.T) {
	dir := t.TempDir()
	p, err := startProcess("sleeper", dir+"/sleeper.log", []string{"/bin/sh", "-c", "trap '' TERM; echo started; while :; do sleep 0.1; done"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Alive() || p.StartTime == 0 {
		t.Fatalf("after start: alive %v start time %d, want alive with a start time", p.Alive(), p.StartTime)
	}
	// A copy without the *exec.Cmd, as read from a state file, sees the same process.
	detached := &Process{Name: p.Name, PID: p.PID, StartTime: p.StartTime}
	if !detached.Alive() {
		t.Fatal("detached copy: not alive")
	}
	wrongStart := &Process{Name: p.Name, PID: p.PID, StartTime: p.StartTime + 1}
	if wrongStart.Alive() {
		t.Error("copy with another start time (a reused PID) counts as alive")
	}
	for deadline := time.Now().Add(5 * time.Second); logTail(dir+"/sleeper.log", 1) != "started"; {
		if time.Now().After(deadline) {
			t.Fatalf("sleeper did not start: log %q", logTail(dir+"/sleeper.log", 5))
		}
		time.Sleep(10 * time.Millisecond)
	}
	begin := time.Now()
	if err := p.Stop(500 * time.Millisecond); err != nil { // ignores SIGTERM: needs SIGKILL
		t.Fatal(err)
	}
	if p.Alive() || detached.Alive() {
		t.Error("alive after Stop")
	}
	if took := time.Since(begin); took < 500*time.Millisecond {
		t.Errorf("Stop took %s, want at least the SIGTERM timeout", took)
	}
}

func TestShimsOfFindsProcessesNamingOurContainerdSocket(t *testing.T) {
	sock := t.TempDir() + "/containerd.sock"
	p, err := startProcess("fake-shim", t.TempDir()+"/shim.log", []string{"/bin/sh", "-c", "sleep 30", "-address", sock}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	other, err := startProcess("other-shim", t.TempDir()+"/other.log", []string{"/bin/sh", "-c", "sleep 30", "-address", sock + ".other"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Stop(time.Second)
	// Until exec, a child shows the parent's (the test binary's) command line.
	got := shimsOf(sock)
	for deadline := time.Now().Add(5 * time.Second); len(got) == 0 && time.Now().Before(deadline); got = shimsOf(sock) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // let the other one exec too: it must still not match
	got = shimsOf(sock)
	if diff := cmp.Diff(got, []int{p.PID}); diff != "" {
		t.Errorf("shimsOf(%s) (-got +want):\n%s", sock, diff)
	}
}

func TestAPIRouteTargetsTheFirstServiceAddressAndTheAPIServerPort(t *testing.T) {
	got, err := newAPIRoute("pressure0", "https://127.0.0.1:38123", "")
	if err != nil {
		t.Fatal(err)
	}
	want := APIRoute{Bridge: "pressure0", ServiceIP: "10.0.0.1", Target: "127.0.0.1:38123"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("route (-got +want):\n%s", diff)
	}
	other, err := newAPIRoute("br", "https://127.0.0.1:1", "10.96.0.0/12")
	if err != nil {
		t.Fatal(err)
	}
	if other.ServiceIP != "10.96.0.1" {
		t.Errorf("service IP of 10.96.0.0/12 = %s, want 10.96.0.1", other.ServiceIP)
	}
	if _, err := newAPIRoute("br", "https://127.0.0.1:1", "fd00::/108"); err == nil {
		t.Error("IPv6 service range accepted, want an error")
	}
}
