package soak

import (
	"context"
	"testing"
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// The objects of drawn episodes (pods of every workload kind and QoS class, the critical pod, the
// Deployment and its PDB) pass a real API server's validation and admission, without a node: a
// mistake in them shows here, not minutes into a soak.
func TestEpisodeObjectsAreAcceptedByTheAPIServer(t *testing.T) {
	cp := clustertest.ControlPlane(t)
	client, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for name, value := range map[string]int32{PriorityLow: 100, PriorityHigh: 1000} {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		if _, err := client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c := &soakCluster{cp: cp, client: client}
	kinds := map[string]bool{}
	for e := range 8 {
		p := Draw(5, e, DrawConfig{FaultEpisode: -1})
		if err := c.create(ctx, p); err != nil {
			t.Fatalf("episode %d: %v", e, err)
		}
		for _, w := range p.Workloads {
			kinds[w.Args[0]] = true
			got, err := client.CoreV1().Pods(p.Namespace()).Get(ctx, w.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Status.QOSClass) != w.QOS() {
				t.Errorf("episode %d pod %s: QoS %s, the plan says %s", e, w.Name, got.Status.QOSClass, w.QOS())
			}
		}
	}
	for _, k := range []string{"mem", "cache", "thrash", "fork", "disk", "files", "sleep"} {
		if !kinds[k] {
			t.Errorf("no workload %q in 8 episodes of seed 5", k)
		}
	}
}
