package deploy

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentconfig "github.com/kube-pressure/pressure/internal/config/agent"
	janitorconfig "github.com/kube-pressure/pressure/internal/config/janitor"
)

// configFile returns data["config.yaml"] of the ConfigMap name.
func configFile(t *testing.T, objs []*unstructured.Unstructured, name string) string {
	t.Helper()
	cm := find(t, objs, "ConfigMap", name)
	s, ok, _ := unstructured.NestedString(cm.Object, "data", "config.yaml")
	if !ok {
		t.Fatalf("ConfigMap %s has no config.yaml", name)
	}
	return s
}

// TestRenderedConfigurationsLoadWithTheDaemonsOwnLoaders feeds the ConfigMaps the chart renders
// through internal/config/agent and internal/config/janitor (strict decoding, defaults,
// validation), so a field the chart writes that the daemons do not know fails here, not at start.
func TestRenderedConfigurationsLoadWithTheDaemonsOwnLoaders(t *testing.T) {
	for _, tc := range []struct {
		values         valuesFile
		prefix         string
		wantDryRun     bool
		wantCgroupKill bool
		wantKubelet    string
		wantTTL        time.Duration
		wantLease      string
	}{
		{values: defaultValues, prefix: "pressure", wantDryRun: true, wantKubelet: "/etc/kubelet-host/config.yaml", wantTTL: 10 * time.Minute, wantLease: releaseNS + "/pressure-janitor"},
		{values: allValues, prefix: "pressure-all", wantDryRun: true, wantCgroupKill: true,
			wantKubelet: "/etc/kubelet-host/config.yaml", wantTTL: 30 * time.Minute, wantLease: "pressure-system/pressure-janitor-all"},
	} {
		t.Run("values="+string(tc.values), func(t *testing.T) {
			objs := objects(t, render(t, tc.values))

			name := tc.prefix + "-agent/config.yaml"
			ac, err := agentconfig.Load(strings.NewReader(configFile(t, objs, tc.prefix+"-agent")), name)
			if err != nil {
				t.Fatalf("agent configuration: %v", err)
			}
			node := "node-a" // what --node-name=$(NODE_NAME) supplies in the pod
			ac.NodeName = &node
			if _, err := agentconfig.Complete(ac, name); err != nil {
				t.Fatalf("agent configuration does not validate: %v", err)
			}
			if *ac.CgroupRoot != "/host/sys/fs/cgroup" || *ac.ProcRoot != "/proc" || *ac.KubeletRootDir != "/host/var/lib/kubelet" {
				t.Errorf("agent roots cgroup=%s proc=%s kubelet=%s, want the DaemonSet's mount points", *ac.CgroupRoot, *ac.ProcRoot, *ac.KubeletRootDir)
			}
			if wantPods := tc.values == allValues; (*ac.KubeletPodsDir == "/host/kubelet-pods") != wantPods ||
				(*ac.PodLogsDir == "/host/var/log/pods") != wantPods {
				t.Errorf("agent kubeletPodsDir=%q podLogsDir=%q, want the podDiskUsage mount points: %v", *ac.KubeletPodsDir,
					*ac.PodLogsDir, wantPods)
			}
			if *ac.DryRun != tc.wantDryRun || *ac.Eviction.AllowCgroupKill != tc.wantCgroupKill || *ac.KubeletConfigFile != tc.wantKubelet {
				t.Errorf("agent dryRun=%v allowCgroupKill=%v kubeletConfigFile=%q, want %v %v %q",
					*ac.DryRun, *ac.Eviction.AllowCgroupKill, *ac.KubeletConfigFile, tc.wantDryRun, tc.wantCgroupKill, tc.wantKubelet)
			}

			jname := tc.prefix + "-janitor/config.yaml"
			jc, err := janitorconfig.Load(strings.NewReader(configFile(t, objs, tc.prefix+"-janitor")), jname)
			if err != nil {
				t.Fatalf("janitor configuration: %v", err)
			}
			janitorconfig.SetDefaults(jc)
			if err := janitorconfig.Validate(jc, janitorconfig.Origin{File: jname}); err != nil {
				t.Fatalf("janitor configuration does not validate: %v", err)
			}
			cfg := janitorconfig.Convert(jc)
			if cfg.DryRun != tc.wantDryRun {
				t.Errorf("janitor dryRun=%v, want %v", cfg.DryRun, tc.wantDryRun)
			}
			if cfg.TTL != tc.wantTTL {
				t.Errorf("janitor ttl %s, want %s", cfg.TTL, tc.wantTTL)
			}
			le := cfg.LeaderElection
			if got := le.LeaseNamespace + "/" + le.LeaseName; got != tc.wantLease || !le.Enabled {
				t.Errorf("janitor lease %s (elect %v), want %s", got, le.Enabled, tc.wantLease)
			}
		})
	}
}
