package actuate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
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

// ledgerVersion is the format version of the stored ledger. Version 1 (the node taint held after a
// loop, arrivals counted as replacements) is still read: its hold and replacements are ignored.
const ledgerVersion = 2

// maxLedgerBytes bounds what ReadLedger reads (annotations are limited to 256 KiB in total).
const maxLedgerBytes = 256 << 10

type ledgerFile struct {
	Version    int         `json:"version"`
	Entries    []Entry     `json:"entries"`
	Avoidances []Avoidance `json:"avoidances,omitempty"`
	// Hold is version 1's taint hold, read and ignored.
	Hold json.RawMessage `json:"hold,omitempty"`
}

// ErrLedgerVersion reports a stored ledger of an unknown format version.
var ErrLedgerVersion = errors.New("unsupported ledger version")

// WriteLedger encodes the ledger as JSON.
func WriteLedger(w io.Writer, l *Ledger) error {
	return json.NewEncoder(w).Encode(ledgerFile{Version: ledgerVersion, Entries: l.entries, Avoidances: l.avoid})
}

// ReadLedger decodes a ledger written by WriteLedger (or by a version 1 agent). Unknown fields are
// errors; every entry needs a UID, a namespace, a name and a time, every avoidance an owner UID and an
// end.
func ReadLedger(r io.Reader, p LedgerPolicy) (*Ledger, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxLedgerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	if len(data) > maxLedgerBytes {
		return nil, fmt.Errorf("ledger larger than %d bytes", maxLedgerBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f ledgerFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("decode ledger: %w", err)
	}
	if f.Version != ledgerVersion && f.Version != 1 {
		return nil, fmt.Errorf("ledger version %d: %w", f.Version, ErrLedgerVersion)
	}
	l := NewLedger(p)
	for i, e := range f.Entries {
		if e.UID == "" || e.Namespace == "" || e.Name == "" || e.At.IsZero() {
			return nil, fmt.Errorf("ledger entry %d (uid %q, pod %s/%s, at %s): uid, namespace, name and at are required",
				i, e.UID, e.Namespace, e.Name, e.At)
		}
		e.Replacements = nil
		l.entries = append(l.entries, e)
	}
	l.sort()
	if n := len(l.entries) - l.policy.MaxEntries; n > 0 {
		l.entries = l.entries[n:]
	}
	for i, a := range f.Avoidances {
		if a.Owner.UID == "" || a.Until.IsZero() {
			return nil, fmt.Errorf("ledger avoidance %d (owner %s uid %q, until %s): owner uid and until are required",
				i, a.Owner, a.Owner.UID, a.Until)
		}
		l.Avoid(a.Owner, a.Until, a.Loop)
	}
	return l, nil
}

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
}

// LoadLedger reads the ledger from store (an empty one when the store has none). params may be nil.
func LoadLedger(ctx context.Context, store LedgerStore, p LedgerPolicy, params AvoidanceWriter) (*PersistentLedger, error) {
	data, err := store.Load(ctx)
	if err != nil {
		return nil, err
	}
	l := NewLedger(p)
	if len(bytes.TrimSpace(data)) > 0 {
		if l, err = ReadLedger(bytes.NewReader(data), p); err != nil {
			return nil, err
		}
	}
	return &PersistentLedger{l: l, store: store, params: params}, nil
}

// save stores the ledger and publishes the avoidances in force at now when they changed.
func (p *PersistentLedger) save(ctx context.Context, now time.Time) error {
	var b bytes.Buffer
	if err := WriteLedger(&b, p.l); err != nil {
		return err
	}
	return errors.Join(p.publish(ctx, now), p.store.Save(ctx, b.Bytes()))
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
func (p *PersistentLedger) Record(ctx context.Context, e Entry) (Loop, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	loop, ok := p.l.Record(e)
	p.l.Prune(e.At)
	return loop, ok, p.save(ctx, e.At)
}

// Avoid runs Ledger.Avoid for now + the cooldown, publishes the avoidances and saves the ledger, so the
// owner's replacement is already kept off the node when the caller evicts. It returns the avoidance that
// was in force before (for Restore) and whether the publication changed.
func (p *PersistentLedger) Avoid(ctx context.Context, o Owner, now time.Time) (Avoidance, bool, error) {
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
	return prev, published, errors.Join(err, p.store.Save(ctx, b.Bytes()))
}

// Restore runs Ledger.Restore and saves.
func (p *PersistentLedger) Restore(ctx context.Context, o Owner, prev Avoidance, now time.Time) error {
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
