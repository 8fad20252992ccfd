package janitor

import (
	"fmt"
	"strings"
	"unique"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// cachedPod is all the informer keeps of a pod: the PodInfo fields Select and the evidence read,
// with requests and limits as short strings. A full v1.Pod costs about 7 KB in the cache; this
// costs a few hundred bytes (docs/janitor.md, "Sizing").
type cachedPod struct {
	info             PodInfo // Labels, Requests and Limits are nil
	requests, limits string  // "cpu=100m,memory=128Mi"
}

// GetObjectMeta makes cachedPod usable by client-go's key functions (meta.Accessor).
func (c *cachedPod) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: c.info.Namespace, Name: c.info.Name, UID: types.UID(c.info.UID),
		ResourceVersion: c.info.ResourceVersion}
}

// podInfo returns the PodInfo with requests and limits.
func (c *cachedPod) podInfo() PodInfo {
	p := c.info
	p.Requests, p.Limits = parseList(c.requests), parseList(c.limits)
	return p
}

// toCached is the informer transform. It is idempotent: client-go may hand it an object it has
// already transformed.
func toCached(obj any) (any, error) {
	switch o := obj.(type) {
	case *cachedPod:
		return o, nil
	case *v1.Pod:
		info := FromPod(o)
		c := &cachedPod{info: info, requests: internString(formatList(quantities(info.Requests))),
			limits: internString(formatList(quantities(info.Limits)))}
		c.info.Labels, c.info.Requests, c.info.Limits = nil, nil, nil
		intern(&c.info)
		return c, nil
	}
	return obj, nil // tombstones and anything else pass through
}

// intern shares the strings that repeat across pods (namespace, node, owner, reason).
func intern(p *PodInfo) {
	for _, s := range []*string{&p.Namespace, &p.Node, &p.Reason, &p.Owner.APIVersion, &p.Owner.Kind, &p.Owner.Name, &p.Owner.UID} {
		*s = internString(*s)
	}
	p.Phase = v1.PodPhase(unique.Make(string(p.Phase)).Value())
	p.QOS = v1.PodQOSClass(unique.Make(string(p.QOS)).Value())
}

func internString(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// parseList reverses formatList; quantities that do not parse are dropped (they came from a
// Quantity's String, so none should).
func parseList(s string) v1.ResourceList {
	if s == "" {
		return nil
	}
	l := v1.ResourceList{}
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		if q, err := resource.ParseQuantity(val); err == nil {
			l[v1.ResourceName(name)] = q
		}
	}
	return l
}

// ownerIndex indexes cached pods by their controller owner's UID (bare pods are not indexed).
const ownerIndex = "owner"

func ownerIndexFunc(obj any) ([]string, error) {
	c, ok := obj.(*cachedPod)
	if !ok {
		return nil, fmt.Errorf("janitor: owner index: unexpected %T", obj)
	}
	if c.info.Owner.UID == "" {
		return nil, nil
	}
	return []string{c.info.Owner.UID}, nil
}

// cachedFrom unwraps an informer event object.
func cachedFrom(obj any) (*cachedPod, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	c, ok := obj.(*cachedPod)
	return c, ok
}
