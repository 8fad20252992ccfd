package janitor

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func TestCachedPodKeepsWhatSelectAndTheEvidenceRead(t *testing.T) {
	sidecar := func(p *v1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "side", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}}})
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
	}{
		{name: "evicted pod of a ReplicaSet with a preserve annotation and two containers",
			pod: evictedPod("shop", "web-1", t0, ownedBy("ReplicaSet", "web-7d9"), withLabels("app", "web"),
				annotated(AnnotationPreserve, "true"), sidecar)},
		{name: "bare pod without any eviction time", pod: evictedPod("default", "lone", t0, noCondition())},
		{name: "terminating pod with finalizers and a first-seen annotation",
			pod: evictedPod("shop", "web-2", t0, noCondition(), annotated(AnnotationTerminalSince, t0.Format(time.RFC3339)),
				func(p *v1.Pod) {
					p.DeletionTimestamp, p.Finalizers = ptr.To(metaTime(t0)), []string{"example.com/hold"}
					p.Status.Message = "message with\x00a NUL and a / slash"
				})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := toCached(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			cp := obj.(*cachedPod)
			want := FromPod(tc.pod)
			want.Labels = nil // the label selector is applied by the API server
			if diff := cmp.Diff(cp.podInfo(), want, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("cached pod (-got +want):\n%s", diff)
			}
			again, err := toCached(cp)
			if err != nil || again != obj {
				t.Errorf("toCached(cached) = %p, %v; want the same object", again, err)
			}
			key, err := cache.MetaNamespaceKeyFunc(cp)
			if wantKey := tc.pod.Namespace + "/" + tc.pod.Name; err != nil || key != wantKey {
				t.Errorf("key of the cached pod = %q, %v; want %s", key, err, wantKey)
			}
			var wantIndex []string
			if want.Owner.UID != "" {
				wantIndex = []string{want.Owner.UID}
			}
			if got, _ := ownerIndexFunc(cp); !cmp.Equal(got, wantIndex) {
				t.Errorf("owner index = %q; want %q", got, wantIndex)
			}
		})
	}
}

// BenchmarkCachedPodHeap reports the heap a store of transformed pods holds, per pod, for the
// sizing table in docs/janitor.md (run with -benchtime=1x; pods are varied like a real fleet).
func BenchmarkCachedPodHeap(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			for range b.N {
				store := cache.NewStore(cache.MetaNamespaceKeyFunc)
				before := heapInUse()
				for i := range n {
					p := evictedPod(fmt.Sprintf("ns-%03d", i%100), fmt.Sprintf("web-%06d-x7k2q", i),
						t0.Add(-time.Duration(i)*time.Second), ownedBy("ReplicaSet", fmt.Sprintf("web-%04d-7d9f8c6b5", i%1000)))
					p.UID = types.UID(fmt.Sprintf("3f2c9a1e-8b7d-4c6e-9f0a-%012d", i))
					p.ResourceVersion = fmt.Sprintf("%d", 1000000+i)
					p.Status.Message = fmt.Sprintf("The node was low on resource: memory. Threshold quantity: 100Mi, available: %dKi. "+
						"Container app was using %dKi, request is 128Mi, has larger consumption of memory. ", 50000+i%997, 300000+i%7919)
					obj, _ := toCached(p)
					_ = store.Add(obj)
				}
				after := heapInUse()
				b.ReportMetric(float64(after-before)/float64(n), "heap-B/pod")
				b.ReportMetric(float64(after-before)/(1<<20), "heap-MiB")
				runtime.KeepAlive(store)
			}
		})
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
