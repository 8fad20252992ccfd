package avoidwebhook

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
)

// Params are the avoidance ConfigMaps of one namespace (label loopbreaker.AvoidanceLabel=true, as
// the policy's paramRef selects them), kept by an informer.
type Params struct {
	lister   func() []*corev1.ConfigMap
	synced   cache.InformerSynced
	factory  informers.SharedInformerFactory
	informer cache.SharedIndexInformer
}

// NewParams returns the informer over namespace's avoidance ConfigMaps; Start runs it.
func NewParams(client kubernetes.Interface, namespace string) *Params {
	f := informers.NewSharedInformerFactoryWithOptions(client, 10*time.Minute, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = loopbreaker.AvoidanceLabel + "=true" }))
	inf := f.Core().V1().ConfigMaps()
	p := &Params{factory: f, informer: inf.Informer()}
	p.synced = p.informer.HasSynced
	lister := inf.Lister()
	p.lister = func() []*corev1.ConfigMap {
		cms, _ := lister.List(labels.Everything()) // a lister over a cache never errs
		return cms
	}
	return p
}

// Start runs the informer until ctx is done.
func (p *Params) Start(ctx context.Context) { p.factory.Start(ctx.Done()) }

// Shutdown waits for the informer's goroutines after ctx is done.
func (p *Params) Shutdown() { p.factory.Shutdown() }

// Synced reports whether the informer has listed the ConfigMaps once.
func (p *Params) Synced() bool { return p.synced() }

// Ready returns an error until the informer has synced (a readiness check).
func (p *Params) Ready() error {
	if !p.Synced() {
		return fmt.Errorf("avoidance configmaps not synced")
	}
	return nil
}

// List returns the params in name order.
func (p *Params) List() []Param { return ParamsOf(p.lister()) }

// ParamsOf turns avoidance ConfigMaps into Params, sorted by namespace and name (a total order: both
// identify a ConfigMap).
func ParamsOf(cms []*corev1.ConfigMap) []Param {
	sorted := append([]*corev1.ConfigMap(nil), cms...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Namespace != sorted[j].Namespace {
			return sorted[i].Namespace < sorted[j].Namespace
		}
		return sorted[i].Name < sorted[j].Name
	})
	out := make([]Param, 0, len(sorted))
	for _, cm := range sorted {
		node, ok := cm.Annotations[loopbreaker.AvoidanceNodeAnnotation]
		out = append(out, Param{Name: cm.Name, Node: node, HasNode: ok, Until: cm.Data})
	}
	return out
}
