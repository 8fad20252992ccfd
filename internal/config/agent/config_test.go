package agent

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/actuate"

	"github.com/kube-pressure/pressure/internal/config/configfile"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
)

func complete(t *testing.T, path string) (*Config, error) {
	t.Helper()
	c, err := LoadFile(path)
	if err != nil {
		return nil, err
	}
	return Complete(c, path)
}

func qty(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

func defaultHeadroom() []Headroom {
	return []Headroom{
		{Signal: "allocatableMemory.available", Quantity: qty("256Mi")},
		{Signal: "containerfs.available", Percentage: 0.05},
		{Signal: "containerfs.inodesFree", Percentage: 0.05},
		{Signal: "imagefs.available", Percentage: 0.05},
		{Signal: "imagefs.inodesFree", Percentage: 0.05},
		{Signal: "memory.available", Quantity: qty("256Mi")},
		{Signal: "nodefs.available", Percentage: 0.05},
		{Signal: "nodefs.inodesFree", Percentage: 0.05},
		{Signal: "pid.available", Percentage: 0.05},
	}
}

func defaults(node string) Config {
	return Config{
		NodeName: node, Policy: PolicyPressure, Headroom: defaultHeadroom(), EvictionLead: 2 * time.Second, SyncPeriod: 10 * time.Second, PodStatsMaxAge: time.Minute,
		APITimeout: 2 * time.Second, KubeletConfigRefresh: time.Minute,
		Notifiers: NotifierConfig{Memcg: true, PSI: true, PSIWindow: 2 * time.Second, PollInterval: 25 * time.Millisecond,
			PollMaxInterval: time.Second, PollRampRate: 4 << 30},
		Ladder: LadderConfig{PDBFallbackWait: 5 * time.Second, AllowDelete: true},
		Reclaim: ReclaimConfig{KubeletHorizon: 10 * time.Second, Action: policy.ReclaimAction{MaxBytes: 2 << 30,
			Settle: 3 * time.Second, MinInterval: 10 * time.Second}},
		MaxEvictionsPerMinute: 10,
		LoopBreaker: LoopBreakerConfig{Enabled: true, TaintKey: "pressure.kube-pressure.io/evicting",
			TaintHysteresis: 10 * time.Second, Window: 10 * time.Minute, Cooldown: 5 * time.Minute, LoopEvictions: 2,
			LoopCooldown: 30 * time.Minute, AvoidanceNamePrefix: "pressure-avoid-"},
		MetricsBindAddress: ":8080", HealthProbeBindAddress: ":8081",
		Paths: Paths{CgroupRoot: "/sys/fs/cgroup", ProcRoot: "/proc", KubeletRootDir: "/var/lib/kubelet", PodLogsDir: "/var/log/pods",
			PodDiskWalkMaxEntries: 1_000_000, PodDiskWalkTimeout: 2 * time.Second},
	}
}

var quantityCmp = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestValidFiles(t *testing.T) {
	full := defaults("node-a")
	full.Kubeconfig = "/etc/pressure/kubeconfig"
	full.Headroom = defaultHeadroom()
	for i := range full.Headroom {
		switch full.Headroom[i].Signal {
		case "memory.available":
			full.Headroom[i].Quantity = qty("512Mi")
		case "nodefs.available":
			full.Headroom[i].Percentage = 0.025
		case "pid.available":
			full.Headroom[i] = Headroom{Signal: "pid.available", Quantity: qty("1000")}
		}
	}
	full.SyncPeriod, full.PodStatsMaxAge, full.EvictionLead = 5*time.Second, 0, 1500*time.Millisecond
	full.APITimeout, full.KubeletConfigRefresh = 3*time.Second, 0
	full.Notifiers = NotifierConfig{PSI: true, PSIWindow: 500 * time.Millisecond, PollInterval: 250 * time.Millisecond,
		PollMaxInterval: 2 * time.Second, PollRampRate: 1 << 30}
	full.Ladder = LadderConfig{AllowDelete: true, AllowCgroupKill: true}
	full.MaxEvictionsPerMinute = 30
	full.LoopBreaker = LoopBreakerConfig{Enabled: true, TaintKey: "example.com/evicting", TaintHysteresis: 30 * time.Second,
		Window: 30 * time.Minute, Cooldown: 15 * time.Minute, LoopEvictions: 3, LoopCooldown: time.Hour,
		AvoidanceNamespace: "pressure-system", AvoidanceNamePrefix: "pressure-agent-avoid-"}
	full.DryRun = true
	full.MetricsBindAddress, full.HealthProbeBindAddress = "127.0.0.1:9090", ":9091"
	full.Paths = Paths{CgroupRoot: "/host/sys/fs/cgroup", ProcRoot: "/host/proc", KubeletRootDir: "/data/kubelet", ImageFsDir: "/data/containerd",
		PodLogsDir: "/data/pod-logs", KubeletPodsDir: "/data/kubelet-pods", PodDiskWalkMaxEntries: 50000, PodDiskWalkTimeout: 500 * time.Millisecond}

	kubelet := defaults("node-a.example.com")
	kubelet.Policy, kubelet.Headroom = PolicyKubelet, nil
	kubelet.KubeletConfigFile = "/var/lib/kubelet/config.yaml"
	kubelet.Notifiers.PSI = false
	kubelet.Ladder.AllowDelete = false
	kubelet.LoopBreaker.Enabled = false
	kubelet.MetricsBindAddress = "0"

	json := defaults("node-a")
	json.DryRun = true
	for i := range json.Headroom {
		if json.Headroom[i].Signal == "memory.available" {
			json.Headroom[i].Quantity = qty("0")
		}
	}

	reclaim := defaults("node-a")
	reclaim.Policy = PolicyReclaimAware
	for i := range reclaim.Headroom {
		if reclaim.Headroom[i].Signal == "memory.available" {
			reclaim.Headroom[i].Quantity = qty("512Mi")
		}
	}

	cases := []struct {
		file string
		want Config
	}{
		{"valid-minimal.yaml", defaults("node-a")},
		{"valid-full.yaml", full},
		{"valid-kubelet-policy.yaml", kubelet},
		{"valid-json.yaml", json},
		{"valid-reclaim-aware-policy.yaml", reclaim},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			got, err := complete(t, filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(*got, tc.want, quantityCmp); diff != "" {
				t.Errorf("config (-got +want):\n%s", diff)
			}
		})
	}
}

func TestEveryValidTestdataFileLoads(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid-*.yaml")
	if len(files) == 0 {
		t.Fatal("no testdata/valid-*.yaml")
	}
	for _, f := range files {
		if _, err := complete(t, f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// wants returns the "# want: " lines of a testdata file.
func wants(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if w, ok := strings.CutPrefix(s.Text(), "# want: "); ok {
			out = append(out, w)
		}
	}
	return out
}

func TestInvalidFilesReportEveryProblem(t *testing.T) {
	files, _ := filepath.Glob("testdata/invalid-*.yaml")
	if len(files) == 0 {
		t.Fatal("no testdata/invalid-*.yaml")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want := wants(t, f)
			if len(want) == 0 {
				t.Fatalf("%s has no '# want: ' line", f)
			}
			_, err := complete(t, f)
			if err == nil {
				t.Fatalf("no error, want %q", want)
			}
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q; got:\n%v", w, err)
				}
				if !strings.HasPrefix(err.Error(), f+": ") {
					t.Errorf("error does not start with the file name %s: %v", f, err)
				}
			}
			var fe *configfile.FieldError
			if errors.As(err, &fe) {
				if n := len(fieldErrors(err)); n != len(want) {
					t.Errorf("%d field errors, want %d (one per '# want:'):\n%v", n, len(want), err)
				}
			}
		})
	}
}

func fieldErrors(err error) []*configfile.FieldError {
	var out []*configfile.FieldError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			var fe *configfile.FieldError
			if errors.As(e, &fe) {
				out = append(out, fe)
			}
		}
	}
	return out
}

func TestTheDocsExampleLoads(t *testing.T) {
	path := filepath.Join("..", "..", "..", "deploy", "examples", "agent-config.yaml")
	got, err := complete(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if got.NodeName != "worker-1" || got.Policy != PolicyPressure || got.Paths.ProcRoot != "/host/proc" {
		t.Errorf("example config %+v", got)
	}
}

func TestDefaultsAgreeWithActuate(t *testing.T) {
	if DefaultTaintKey != loopbreaker.TaintKey {
		t.Errorf("DefaultTaintKey %q, loopbreaker.TaintKey %q", DefaultTaintKey, loopbreaker.TaintKey)
	}
	if DefaultPDBFallbackWait != actuate.DefaultPDBFallbackWait {
		t.Errorf("DefaultPDBFallbackWait %s, actuate %s", DefaultPDBFallbackWait, actuate.DefaultPDBFallbackWait)
	}
	if DefaultLoopWindow != policy.DefaultLoopWindow || DefaultLoopCooldown != policy.DefaultLoopCooldown {
		t.Errorf("loop window/cooldown %s/%s, actuate %s/%s", DefaultLoopWindow, DefaultLoopCooldown,
			policy.DefaultLoopWindow, policy.DefaultLoopCooldown)
	}
}

// jsonFields lists the JSON paths of every field of the file type.
func jsonFields(t reflect.Type, prefix string) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft.PkgPath() == t.PkgPath() {
			out = append(out, jsonFields(ft, prefix+name+".")...)
			continue
		}
		out = append(out, prefix+name)
	}
	return out
}

func TestTheDocsDescribeEveryField(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "agent-config.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range jsonFields(reflect.TypeOf(AgentConfiguration{}), "") {
		if !strings.Contains(string(doc), "`"+f+"`") {
			t.Errorf("docs/agent-config.md does not describe `%s`", f)
		}
	}
}

func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(string(b))
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		c, err := Load(strings.NewReader(in), "fuzz.yaml")
		if err != nil {
			return
		}
		cfg, err := Complete(c, "fuzz.yaml")
		if err != nil {
			return
		}
		if cfg.NodeName == "" || cfg.SyncPeriod <= 0 || cfg.MaxEvictionsPerMinute < 1 {
			t.Fatalf("a valid config with invalid values: %+v", cfg)
		}
	})
}

func TestReclaimAwarePolicyReachesThePolicy(t *testing.T) {
	c, err := complete(t, filepath.Join("testdata", "valid-reclaim-aware-policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pc := c.PolicyConfig()
	if pc.Policy != policy.ReclaimAware {
		t.Errorf("PolicyConfig().Policy = %q, want %q", pc.Policy, policy.ReclaimAware)
	}
	if err := pc.Validate(); err != nil {
		t.Errorf("PolicyConfig().Validate(): %v", err)
	}
	if h := pc.Headroom[signal.MemoryAvailable]; h.Quantity == nil || h.Quantity.String() != "512Mi" {
		t.Errorf("memory.available headroom = %v, want 512Mi", h)
	}
}

func TestTheEvictionLeadReachesThePolicyAndDefaultsToThePolicysOwn(t *testing.T) {
	for _, tc := range []struct {
		file string
		want time.Duration
	}{
		{"valid-minimal.yaml", policy.DefaultEvictionLead},
		{"valid-full.yaml", 1500 * time.Millisecond},
	} {
		c, err := complete(t, filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.PolicyConfig().EvictionLead; got != tc.want {
			t.Errorf("%s: PolicyConfig().EvictionLead = %s, want %s", tc.file, got, tc.want)
		}
	}
}

func TestTheLoopBreakersWindowsReachTheLoopRulesWithThePolicysInFlightRule(t *testing.T) {
	for _, tc := range []struct {
		file string
		want policy.LoopConfig
	}{
		{"valid-minimal.yaml", policy.LoopConfig{Window: policy.DefaultLoopWindow, Cooldown: policy.DefaultLoopCooldown,
			LoopEvictions: policy.DefaultLoopEvictions, LoopCooldown: policy.DefaultLoopAvoidance}},
		{"valid-full.yaml", policy.LoopConfig{Window: 30 * time.Minute, Cooldown: 15 * time.Minute, LoopEvictions: 3,
			LoopCooldown: time.Hour}},
	} {
		c, err := complete(t, filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		tc.want.InFlight = c.PolicyConfig().InFlight()
		if diff := cmp.Diff(c.LoopConfig(), tc.want); diff != "" {
			t.Errorf("%s: LoopConfig() (-got +want):\n%s", tc.file, diff)
		}
	}
}
