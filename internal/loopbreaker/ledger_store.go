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

	"github.com/kube-pressure/pressure/internal/policy"
)

// LedgerAnnotation is the Node annotation that stores the ledger.
//
// Why an annotation on our own Node rather than a ConfigMap or Lease: the agent already patches its Node
// (the loop breaker's taint), so no extra RBAC is needed, whereas a namespaced ConfigMap per node would
// need create/update rights in which every node's agent could overwrite every other node's ledger. The
// ledger's lifetime is the node's: a deleted and re-registered node starts clean. `kubectl get node -o
// yaml` shows it next to the taint it explains. The cost is size and watch traffic: the ledger is capped
// (policy.LoopConfig.MaxEntries, about 250 bytes an entry) and written only when an eviction, a settlement
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
	Write(ctx context.Context, as []policy.Avoidance) error
}

// PersistentLedger is the node's eviction history (policy.History: the rules) kept in a LedgerStore, safe
// for concurrent use. It decides nothing: each method runs the policy's rule and stores the result.
// Every change is saved before the method returns; a failed save keeps the change in memory and returns
// the error (the next save writes it). When Params is set, every change of the avoidances in force is also written there
// (and retried at the next change or Prune until it succeeds).
//
// Its mutex only guards memory: no API call is made while it is held, so a decision reading the ledger
// (Avoidances, Entries) never waits for a slow API server. A write copies the ledger under the
// mutex and writes outside it; writes are serialized by a second mutex that readers never take, and each
// write takes the newest copy when its turn comes, so the store never goes back to an older state (gen
// counts the changes, saved is the newest generation the store holds).
type PersistentLedger struct {
	mu     sync.Mutex
	l      *policy.History
	store  LedgerStore
	params AvoidanceWriter
	// cfg is the loop rules ReadLedger reads the stored history under.
	cfg policy.LoopConfig
	// published is what params last accepted; nil until the first success.
	published []policy.Avoidance
	// unreadable is why the stored ledger was not used; with unreadable.Newer nothing is saved.
	unreadable *UnreadableLedgerError
	// pending: the stored ledger is not read yet (NewPendingLedger); nothing is saved, dirty and
	// lastChange say whether and when the ledger changed meanwhile.
	pending    bool
	dirty      bool
	lastChange time.Time
	// gen counts the changes to be saved; saved is the generation the store holds.
	gen, saved uint64

	// writing serializes the writes to the store and params. It is held across API calls and never
	// taken by a reader.
	writing sync.Mutex
}

// LoadLedger reads the ledger from store (an empty one when the store has none). params may be nil. It
// fails only when the store does (the API): a stored ledger it cannot read (corrupt, invalid, or of a
// newer agent) is not retried forever but gives an empty ledger, with the reason in Unreadable. A newer
// agent's ledger is never overwritten (this ledger then lives in memory only); any other is replaced at
// the next change.
func LoadLedger(ctx context.Context, store LedgerStore, c policy.LoopConfig, params AvoidanceWriter) (*PersistentLedger, error) {
	pl := NewPendingLedger(store, c, params)
	if err := pl.Load(ctx); err != nil {
		return nil, err
	}
	return pl, nil
}

// NewPendingLedger returns an empty ledger not loaded from store yet, for an agent that starts while the
// API server is down: it records in memory and saves nothing (it would overwrite the stored ledger it
// has not read) until Load succeeds.
func NewPendingLedger(store LedgerStore, c policy.LoopConfig, params AvoidanceWriter) *PersistentLedger {
	return &PersistentLedger{l: policy.NewHistory(c), cfg: c, store: store, params: params, pending: true}
}

// Load reads the stored ledger and merges it into this one (its entries and avoidances are added to
// what was recorded since the start), then saves when something was recorded meanwhile. It fails only
// when the store does; see LoadLedger for an unreadable stored ledger. Once loaded, Load does nothing.
// The read is made without the memory mutex: the ledger records and answers meanwhile.
func (p *PersistentLedger) Load(ctx context.Context) error {
	if p.Loaded() {
		return nil
	}
	data, err := p.store.Load(ctx)
	if err != nil {
		return err
	}
	p.mu.Lock()
	if !p.pending { // a concurrent Load won
		p.mu.Unlock()
		return nil
	}
	p.pending = false
	if len(bytes.TrimSpace(data)) > 0 {
		stored, err := ReadLedger(bytes.NewReader(data), p.cfg)
		if err != nil {
			p.unreadable = &UnreadableLedgerError{Value: string(data), Newer: errors.Is(err, ErrLedgerVersion) && newerVersion(data), Err: err}
		} else {
			p.l.Merge(stored)
		}
	}
	dirty, at := p.dirty, p.lastChange
	p.mu.Unlock()
	if !dirty {
		return nil
	}
	return p.flush(ctx, at, true)
}

// Loaded reports whether the stored ledger has been read (Load succeeded).
func (p *PersistentLedger) Loaded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.pending
}

// Unreadable is why the stored ledger was not used (LoadLedger started an empty one), or nil.
func (p *PersistentLedger) Unreadable() *UnreadableLedgerError {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unreadable
}

// change runs f on the ledger under the memory mutex; when f reports a change, it counts a generation
// (or, before Load, marks the ledger dirty).
func (p *PersistentLedger) change(now time.Time, f func(h *policy.History) bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !f(p.l) {
		return false
	}
	p.gen++
	if p.pending {
		p.dirty, p.lastChange = true, now
	}
	return true
}

// copyForWrite is, under the memory mutex, what a write is to send: the avoidances in force at now when
// they differ from the last publication (nil when not), and the encoded ledger with its generation when
// the store is behind (nil when not, before Load, or when the stored ledger is a newer agent's).
func (p *PersistentLedger) copyForWrite(now time.Time, store bool) (as []policy.Avoidance, publish bool, data []byte, gen uint64, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.params != nil {
		as = p.l.Avoidances(now)
		publish = p.published == nil || !sameAvoidances(as, p.published)
	}
	if !store || p.pending || p.gen == p.saved || (p.unreadable != nil && p.unreadable.Newer) {
		return as, publish, nil, 0, nil
	}
	var b bytes.Buffer
	if err := WriteLedger(&b, p.l); err != nil {
		return as, publish, nil, 0, err
	}
	return as, publish, b.Bytes(), p.gen, nil
}

// flush writes the newest state: the avoidances to params when they changed, and (with store) the
// ledger to the store when it is behind.
func (p *PersistentLedger) flush(ctx context.Context, now time.Time, store bool) error {
	_, err := p.flushPublished(ctx, now, store)
	return err
}

// flushPublished is flush, and reports whether it wrote params.
func (p *PersistentLedger) flushPublished(ctx context.Context, now time.Time, store bool) (bool, error) {
	p.writing.Lock()
	defer p.writing.Unlock()
	as, publish, data, gen, err := p.copyForWrite(now, store)
	var perr, serr error
	if publish {
		if perr = p.params.Write(ctx, as); perr == nil {
			p.mu.Lock()
			p.published = append([]policy.Avoidance{}, as...)
			p.mu.Unlock()
		}
	}
	if data != nil {
		if serr = p.store.Save(ctx, data); serr == nil {
			p.mu.Lock()
			p.saved = max(p.saved, gen)
			p.mu.Unlock()
		}
	}
	return publish && perr == nil, errors.Join(err, perr, serr)
}

func sameAvoidances(a, b []policy.Avoidance) bool {
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

// Record records e (policy.History.Record), prunes as of e.At and saves.
func (p *PersistentLedger) Record(ctx context.Context, e policy.HistoryEntry) (policy.EvictionLoop, bool, error) {
	var loop policy.EvictionLoop
	var ok bool
	p.change(e.At, func(h *policy.History) bool {
		loop, ok = h.Record(e)
		h.Prune(e.At)
		return true
	})
	return loop, ok, p.flush(ctx, e.At, true)
}

// Avoid runs policy.History.AvoidBefore, publishes the avoidances and saves the ledger, so the owner's
// replacement is already kept off the node when the caller evicts. It returns the avoidance that was in
// force before (for Restore) and whether the publication changed.
func (p *PersistentLedger) Avoid(ctx context.Context, o policy.Workload, now time.Time) (policy.Avoidance, bool, error) {
	var prev policy.Avoidance
	if !p.change(now, func(h *policy.History) bool {
		var avoided bool
		prev, avoided = h.AvoidBefore(o, now)
		return avoided
	}) {
		return prev, false, nil
	}
	published, err := p.flushPublished(ctx, now, true)
	return prev, published, err
}

// Restore runs policy.History.Restore and saves.
func (p *PersistentLedger) Restore(ctx context.Context, o policy.Workload, prev policy.Avoidance, now time.Time) error {
	if !policy.Avoidable(o) {
		return nil
	}
	p.change(now, func(h *policy.History) bool { h.Restore(o, prev); return true })
	return p.flush(ctx, now, true)
}

// Settle marks uid's eviction finished and saves when that changed anything.
func (p *PersistentLedger) Settle(ctx context.Context, uid string, now time.Time) error {
	if !p.change(now, func(h *policy.History) bool { return h.Settle(uid, now) }) {
		return nil
	}
	return p.flush(ctx, now, true)
}

// Prune runs policy.History.Prune and saves when the store is behind: what it pruned now, or a change
// whose save failed (the API server was down when an entry expired: the next Prune writes it, not the
// next eviction); it also publishes the avoidances when the last publication failed or never happened.
func (p *PersistentLedger) Prune(ctx context.Context, now time.Time) error {
	p.change(now, func(h *policy.History) bool { return h.Prune(now) })
	return p.flush(ctx, now, true)
}

// Avoidances returns the avoidances in force at now.
func (p *PersistentLedger) Avoidances(now time.Time) []policy.Avoidance {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.l.Avoidances(now)
}

// Entries returns a copy of the entries, oldest first.
func (p *PersistentLedger) Entries() []policy.HistoryEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.l.Entries()
}
