package agent

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listerscorev1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// podInformer lists the pods bound to one node from a shared informer (field selector spec.nodeName).
// While the API is unreachable the informer keeps its cache and retries with client-go's backoff.
type podInformer struct {
	factory informers.SharedInformerFactory
	lister  listerscorev1.PodLister
	synced  cache.InformerSynced
}

// newPodInformer builds the informer; Start starts it. onChange, if set, is called when a pod is added
// or deleted (a pod arriving or leaving changes what the next sync may evict).
func newPodInformer(client kubernetes.Interface, node string, resync time.Duration, onChange func()) (*podInformer, error) {
	f := informers.NewSharedInformerFactoryWithOptions(client, resync,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", node).String()
		}))
	inf := f.Core().V1().Pods()
	pi := &podInformer{factory: f, lister: inf.Lister(), synced: inf.Informer().HasSynced}
	if onChange != nil {
		h := cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { onChange() },
			DeleteFunc: func(any) { onChange() },
		}
		if _, err := inf.Informer().AddEventHandler(h); err != nil {
			return nil, fmt.Errorf("pod informer for node %s: %w", node, err)
		}
	}
	return pi, nil
}

// Start starts the informer without waiting for its cache: Synced says when the list is complete (the
// agent does not wait for the API server to protect the node).
func (p *podInformer) Start(ctx context.Context) {
	p.factory.Start(ctx.Done())
}

// Shutdown waits for the informer goroutines after ctx is done.
func (p *podInformer) Shutdown() { p.factory.Shutdown() }

// Synced reports whether the cache has synced.
func (p *podInformer) Synced() bool { return p.synced() }

// List implements podLister.
func (p *podInformer) List() ([]*corev1.Pod, error) {
	return p.lister.List(labels.Everything())
}
