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

// ledgerVersion is the format version of the stored ledger.
const ledgerVersion = 1

// maxLedgerBytes bounds what ReadLedger reads (annotations are limited to 256 KiB in total).
const maxLedgerBytes = 256 << 10

type ledgerFile struct {
	Version int     `json:"version"`
	Entries []Entry `json:"entries"`
	Hold    *Hold   `json:"hold,omitempty"`
}

// ErrLedgerVersion reports a stored ledger of an unknown format version.
var ErrLedgerVersion = errors.New("unsupported ledger version")

// WriteLedger encodes the ledger as JSON.
func WriteLedger(w io.Writer, l *Ledger) error {
	return json.NewEncoder(w).Encode(ledgerFile{Version: ledgerVersion, Entries: l.entries, Hold: l.hold})
}

// ReadLedger decodes a ledger written by WriteLedger. Unknown fields are errors; every entry needs a
// UID, a namespace, a name and a time.
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
	if f.Version != ledgerVersion {
		return nil, fmt.Errorf("ledger version %d: %w", f.Version, ErrLedgerVersion)
	}
	l := NewLedger(p)
	for i, e := range f.Entries {
		if e.UID == "" || e.Namespace == "" || e.Name == "" || e.At.IsZero() {
			return nil, fmt.Errorf("ledger entry %d (uid %q, pod %s/%s, at %s): uid, namespace, name and at are required",
				i, e.UID, e.Namespace, e.Name, e.At)
		}
		l.Record(e)
	}
	if f.Hold != nil && f.Hold.Until.IsZero() {
		return nil, fmt.Errorf("ledger hold (signal %q): until is required", f.Hold.Signal)
	}
	l.hold = f.Hold
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

// PersistentLedger is a Ledger kept in a LedgerStore, safe for concurrent use. Every change is saved
// before the method returns; a failed save keeps the change in memory and returns the error.
type PersistentLedger struct {
	mu    sync.Mutex
	l     *Ledger
	store LedgerStore
}

// LoadLedger reads the ledger from store (an empty one when the store has none).
func LoadLedger(ctx context.Context, store LedgerStore, p LedgerPolicy) (*PersistentLedger, error) {
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
	return &PersistentLedger{l: l, store: store}, nil
}

func (p *PersistentLedger) save(ctx context.Context) error {
	var b bytes.Buffer
	if err := WriteLedger(&b, p.l); err != nil {
		return err
	}
	return p.store.Save(ctx, b.Bytes())
}

// InFlight reports Ledger.InFlight.
func (p *PersistentLedger) InFlight(uid types.UID, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.l.InFlight(uid, now)
}

// Record records e, prunes as of e.At and saves.
func (p *PersistentLedger) Record(ctx context.Context, e Entry) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.l.Record(e)
	p.l.Prune(e.At)
	return p.save(ctx)
}

// Settle marks uid's eviction finished and saves when that changed anything.
func (p *PersistentLedger) Settle(ctx context.Context, uid types.UID, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.l.Settle(uid, now) {
		return nil
	}
	return p.save(ctx)
}

// Observe runs Ledger.Observe and saves when it found a loop.
func (p *PersistentLedger) Observe(ctx context.Context, a Arrival, now time.Time) (Loop, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	loop, ok := p.l.Observe(a, now)
	if !ok {
		return loop, false, nil
	}
	return loop, true, p.save(ctx)
}

// Hold reports Ledger.Hold.
func (p *PersistentLedger) Hold(now time.Time) (Hold, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.l.Hold(now)
}

// Prune runs Ledger.Prune and saves when it changed anything.
func (p *PersistentLedger) Prune(ctx context.Context, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.l.Prune(now) {
		return nil
	}
	return p.save(ctx)
}

// Entries returns a copy of the entries, oldest first.
func (p *PersistentLedger) Entries() []Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.l.Entries()
}
