package loopbreaker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kube-pressure/pressure/internal/owner"
)

// LedgerAnnotation is the Node annotation that stores the ledger.
//
// Why an annotation on our own Node rather than a ConfigMap or Lease: the agent already patches its Node
// (the loop breaker's taint), so no extra RBAC is needed, whereas a namespaced ConfigMap per node would
// need create/update rights in which every node's agent could overwrite every other node's ledger. The
// ledger's lifetime is the node's: a deleted and re-registered node starts clean. `kubectl get node -o
// yaml` shows it next to the taint it explains. The cost is size and watch traffic: the ledger is capped
// (LedgerPolicy.MaxEntries, about 250 bytes an entry) and written only when an eviction, a settlement
// or a loop changes it, which is rare next to the kubelet's 10 s status updates.
const LedgerAnnotation = "pressure.kube-pressure.io/ledger"

// LedgerStore keeps the encoded ledger somewhere that outlives the agent.
type LedgerStore interface {
	// Load returns the stored ledger, or nil when there is none.
	Load(ctx context.Context) ([]byte, error)
	Save(ctx context.Context, data []byte) error
}

// NodeAnnotationStore stores the ledger in the LedgerAnnotation of the Node. Save patches only that
// annotation. With DryRun it never writes.
type NodeAnnotationStore struct {
	Client kubernetes.Interface
	Node   string
	DryRun bool
}

// Load reads the annotation.
func (s *NodeAnnotationStore) Load(ctx context.Context) ([]byte, error) {
	n, err := s.Client.CoreV1().Nodes().Get(ctx, s.Node, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get node %s: %w", s.Node, err)
	}
	v, ok := n.Annotations[LedgerAnnotation]
	if !ok {
		return nil, nil
	}
	return []byte(v), nil
}

// Save writes the annotation with a JSON merge patch that touches nothing else.
func (s *NodeAnnotationStore) Save(ctx context.Context, data []byte) error {
	if s.DryRun {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		LedgerAnnotation: string(bytes.TrimSpace(data)),
	}}})
	if err != nil {
		return err
	}
	if _, err := s.Client.CoreV1().Nodes().Patch(ctx, s.Node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("patch node %s annotation %s: %w", s.Node, LedgerAnnotation, err)
	}
	return nil
}

// AvoidanceWriter publishes the node's avoidances where the admission policy reads them
// (AvoidanceParams).
type AvoidanceWriter interface {
	Write(ctx context.Context, as []Avoidance) error
}

// PersistentLedger is a Ledger kept in a LedgerStore, safe for concurrent use. Every change is saved
// before the method returns; a failed save keeps the change in memory and returns the error. When
// Params is set, every change of the avoidances in force is also written there (and retried at the
// next change or Prune until it succeeds).
type PersistentLedger struct {
	mu     sync.Mutex
	l      *Ledger
	store  LedgerStore
	params AvoidanceWriter
	// published is what params last accepted; nil until the first success.
	published []Avoidance
	// unreadable is why the stored ledger was not used; with unreadable.Newer nothing is saved.
	unreadable *UnreadableLedgerError
	// pending: the stored ledger is not read yet (NewPendingLedger); nothing is saved, dirty and
	// lastChange say whether and when the ledger changed meanwhile.
	pending    bool
	dirty      bool
	lastChange time.Time
}

// LoadLedger reads the ledger from store (an empty one when the store has none). params may be nil. It
// fails only when the store does (the API): a stored ledger it cannot read (corrupt, invalid, or of a
// newer agent) is not retried forever but gives an empty ledger, with the reason in Unreadable. A newer
// agent's ledger is never overwritten (this ledger then lives in memory only); any other is replaced at
// the next change.
func LoadLedger(ctx context.Context, store LedgerStore, p LedgerPolicy, params AvoidanceWriter) (*PersistentLedger, error) {
	pl := NewPendingLedger(store, p, params)
	if err := pl.Load(ctx); err != nil {
		return nil, err
	}
	return pl, nil
}

// NewPendingLedger returns an empty ledger not loaded from store yet, for an agent that starts while the
// API server is down: it records in memory and saves nothing (it would overwrite the stored ledger it
// has not read) until Load succeeds.
func NewPendingLedger(store LedgerStore, p LedgerPolicy, params AvoidanceWriter) *PersistentLedger {
	return &PersistentLedger{l: NewLedger(p), store: store, params: params, pending: true}
}

// Load reads the stored ledger and merges it into this one (its entries and avoidances are added to
// what was recorded since the start), then saves when something was recorded meanwhile. It fails only
// when the store does; see LoadLedger for an unreadable stored ledger. Once loaded, Load does nothing.
func (p *PersistentLedger) Load(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.pending {
		return nil
	}
	data, err := p.store.Load(ctx)
	if err != nil {
		return err
	}
	p.pending = false
	if len(bytes.TrimSpace(data)) > 0 {
		stored, err := ReadLedger(bytes.NewReader(data), p.l.policy)
		if err != nil {
			p.unreadable = &UnreadableLedgerError{Value: string(data), Newer: errors.Is(err, ErrLedgerVersion) && newerVersion(data), Err: err}
		} else {
			p.l.merge(stored)
		}
	}
	if !p.dirty {
		return nil
	}
	return p.save(ctx, p.lastChange)
}

// Loaded reports whether the stored ledger has been read (Load succeeded).
func (p *PersistentLedger) Loaded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.pending
}

// Unreadable is why the stored ledger was not used (LoadLedger started an empty one), or nil.
func (p *PersistentLedger) Unreadable() *UnreadableLedgerError { return p.unreadable }

// saveStore writes data to the store, unless the stored ledger is a newer agent's or not read yet.
func (p *PersistentLedger) saveStore(ctx context.Context, data []byte, now time.Time) error {
	switch {
	case p.pending:
		p.dirty, p.lastChange = true, now
		return nil
	case p.unreadable != nil && p.unreadable.Newer:
		return nil
	}
	return p.store.Save(ctx, data)
}

// save stores the ledger and publishes the avoidances in force at now when they changed.
func (p *PersistentLedger) save(ctx context.Context, now time.Time) error {
	var b bytes.Buffer
	if err := WriteLedger(&b, p.l); err != nil {
		return err
	}
	return errors.Join(p.publish(ctx, now), p.saveStore(ctx, b.Bytes(), now))
}

func (p *PersistentLedger) publish(ctx context.Context, now time.Time) error {
	_, err := p.publishChanged(ctx, now)
	return err
}

// publishChanged writes the avoidances in force to params when they differ from the last publication
// and reports whether it wrote.
func (p *PersistentLedger) publishChanged(ctx context.Context, now time.Time) (bool, error) {
	if p.params == nil {
		return false, nil
	}
	as := p.l.Avoidances(now)
	if p.published != nil && sameAvoidances(as, p.published) {
		return false, nil
	}
	if err := p.params.Write(ctx, as); err != nil {
		return false, err
	}
	p.published = append([]Avoidance{}, as...)
	return true, nil
}

func sameAvoidances(a, b []Avoidance) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Owner.UID != b[i].Owner.UID || !a[i].Until.Equal(b[i].Until) {
			return false
		}
	}
	return true
}

// InFlight reports Ledger.InFlight.
func (p *PersistentLedger) InFlight(uid types.UID, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.l.InFlight(uid, now)
}

// Record records e (Ledger.Record), prunes as of e.At and saves.
func (p *PersistentLedger) Record(ctx context.Context, e Entry) (EvictionLoop, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	loop, ok := p.l.Record(e)
	p.l.Prune(e.At)
	return loop, ok, p.save(ctx, e.At)
}

// Avoid runs Ledger.Avoid for now + the cooldown, publishes the avoidances and saves the ledger, so the
// owner's replacement is already kept off the node when the caller evicts. It returns the avoidance that
// was in force before (for Restore) and whether the publication changed.
func (p *PersistentLedger) Avoid(ctx context.Context, o owner.Ref, now time.Time) (Avoidance, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	prev := p.l.Avoidance(o)
	if !Avoidable(o) {
		return prev, false, nil
	}
	p.l.Avoid(o, now.Add(p.l.policy.Cooldown), false)
	published, err := p.publishChanged(ctx, now)
	var b bytes.Buffer
	if werr := WriteLedger(&b, p.l); werr != nil {
		return prev, published, errors.Join(err, werr)
	}
	return prev, published, errors.Join(err, p.saveStore(ctx, b.Bytes(), now))
}

// Restore runs Ledger.Restore and saves.
func (p *PersistentLedger) Restore(ctx context.Context, o owner.Ref, prev Avoidance, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !Avoidable(o) {
		return nil
	}
	p.l.Restore(o, prev)
	return p.save(ctx, now)
}

// Settle marks uid's eviction finished and saves when that changed anything.
func (p *PersistentLedger) Settle(ctx context.Context, uid types.UID, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.l.Settle(uid, now) {
		return nil
	}
	return p.save(ctx, now)
}

// Prune runs Ledger.Prune and saves when it changed anything; it also publishes the avoidances when the
// last publication failed or never happened.
func (p *PersistentLedger) Prune(ctx context.Context, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.l.Prune(now) {
		return p.publish(ctx, now)
	}
	return p.save(ctx, now)
}

// Avoidances returns the avoidances in force at now.
func (p *PersistentLedger) Avoidances(now time.Time) []Avoidance {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.l.Avoidances(now)
}

// Entries returns a copy of the entries, oldest first.
func (p *PersistentLedger) Entries() []Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.l.Entries()
}
