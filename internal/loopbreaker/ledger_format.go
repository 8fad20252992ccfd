package loopbreaker

// The stored ledger's format: JSON, versioned, strictly read.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kube-pressure/pressure/internal/policy"
)

// ledgerVersion is the format version of the stored ledger. Version 1 (the node taint held after a
// loop, arrivals counted as replacements) is still read: its hold and replacements are ignored.
const ledgerVersion = 2

// maxLedgerBytes bounds what ReadLedger reads (annotations are limited to 256 KiB in total).
const maxLedgerBytes = 256 << 10

type ledgerFile struct {
	Version    int             `json:"version"`
	Entries    []entryJSON     `json:"entries"`
	Avoidances []avoidanceJSON `json:"avoidances,omitempty"`
	// Hold is version 1's taint hold, read and ignored.
	Hold json.RawMessage `json:"hold,omitempty"`
}

// entryJSON is the stored form of a policy.HistoryEntry.
type entryJSON struct {
	UID       string    `json:"uid"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Owner     ownerJSON `json:"owner,omitzero"`
	Signal    string    `json:"signal,omitempty"`
	Rung      string    `json:"rung,omitempty"`
	At        time.Time `json:"at"`
	Created   time.Time `json:"created,omitzero"`
	// SettledAt is nil while the eviction is in flight.
	SettledAt *time.Time `json:"settledAt,omitempty"`
	// Replacements is read from ledgers of version 1 (which counted arrivals), ignored and never written.
	Replacements []string `json:"replacements,omitempty"`
}

// ownerJSON is the stored form of a policy.Workload.
type ownerJSON struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	UID        string `json:"uid,omitempty"`
}

// avoidanceJSON is the stored form of a policy.Avoidance.
type avoidanceJSON struct {
	Owner ownerJSON `json:"owner"`
	Until time.Time `json:"until"`
	Loop  bool      `json:"loop,omitempty"`
}

// ErrLedgerVersion reports a stored ledger of an unknown format version.
var ErrLedgerVersion = errors.New("unsupported ledger version")

// WriteLedger encodes the history as JSON.
func WriteLedger(w io.Writer, h *policy.History) error {
	entries, avoid := h.Stored()
	f := ledgerFile{Version: ledgerVersion, Entries: make([]entryJSON, len(entries))}
	for i, e := range entries {
		f.Entries[i] = entryJSON{UID: e.UID, Namespace: e.Namespace, Name: e.Name, Owner: ownerJSON(e.Owner), Signal: e.Signal,
			Rung: e.Rung, At: e.At, Created: e.Created, SettledAt: e.SettledAt}
	}
	for _, a := range avoid {
		f.Avoidances = append(f.Avoidances, avoidanceJSON{Owner: ownerJSON(a.Owner), Until: a.Until, Loop: a.Loop})
	}
	return json.NewEncoder(w).Encode(f)
}

// ReadLedger decodes a ledger written by WriteLedger (or by a version 1 agent) into the history it
// holds under the loop rules c. Unknown fields are errors; every entry needs a UID, a namespace, a name
// and a time, every avoidance an owner UID and an end.
func ReadLedger(r io.Reader, c policy.LoopConfig) (*policy.History, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxLedgerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	if len(data) > maxLedgerBytes {
		return nil, fmt.Errorf("ledger larger than %d bytes", maxLedgerBytes)
	}
	// A newer format may add fields: its version is read first, so that it is reported as a version and
	// not as an unknown field.
	if v, ok := storedVersion(data); ok && v > ledgerVersion {
		return nil, fmt.Errorf("ledger version %d (this agent reads 1 and %d): %w", v, ledgerVersion, ErrLedgerVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f ledgerFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("decode ledger: %w", err)
	}
	if f.Version != ledgerVersion && f.Version != 1 {
		return nil, fmt.Errorf("ledger version %d (this agent reads 1 and %d): %w", f.Version, ledgerVersion, ErrLedgerVersion)
	}
	entries := make([]policy.HistoryEntry, 0, len(f.Entries))
	for i, e := range f.Entries {
		if e.UID == "" || e.Namespace == "" || e.Name == "" || e.At.IsZero() {
			return nil, fmt.Errorf("ledger entry %d (uid %q, pod %s/%s, at %s): uid, namespace, name and at are required",
				i, e.UID, e.Namespace, e.Name, e.At)
		}
		entries = append(entries, policy.HistoryEntry{UID: e.UID, Namespace: e.Namespace, Name: e.Name, Owner: policy.Workload(e.Owner),
			Signal: e.Signal, Rung: e.Rung, At: e.At, Created: e.Created, SettledAt: e.SettledAt})
	}
	avoid := make([]policy.Avoidance, 0, len(f.Avoidances))
	for i, a := range f.Avoidances {
		if a.Owner.UID == "" || a.Until.IsZero() {
			return nil, fmt.Errorf("ledger avoidance %d (owner %s uid %q, until %s): owner uid and until are required",
				i, policy.Workload(a.Owner), a.Owner.UID, a.Until)
		}
		avoid = append(avoid, policy.Avoidance{Owner: policy.Workload(a.Owner), Until: a.Until, Loop: a.Loop})
	}
	return policy.HistoryOf(c, entries, avoid), nil
}

// UnreadableLedgerError is why LoadLedger started an empty ledger instead of the stored one.
type UnreadableLedgerError struct {
	// Value is the stored ledger as found.
	Value string
	// Newer is set when a newer agent wrote it (a format version above this agent's): it is then never
	// overwritten, and this agent's ledger lives in memory only.
	Newer bool
	Err   error
}

func (e *UnreadableLedgerError) Error() string {
	if e.Newer {
		return fmt.Sprintf("ledger written by a newer agent, kept as is and not overwritten: %v", e.Err)
	}
	return fmt.Sprintf("ledger unreadable, replaced at the next change: %v", e.Err)
}

func (e *UnreadableLedgerError) Unwrap() error { return e.Err }

// newerVersion reports whether data holds a version above this agent's.
func newerVersion(data []byte) bool {
	v, ok := storedVersion(data)
	return ok && v > ledgerVersion
}

// storedVersion is the format version of a stored ledger, read leniently; false if there is none.
func storedVersion(data []byte) (int, bool) {
	var probe struct {
		Version *int `json:"version"`
	}
	if json.Unmarshal(data, &probe) != nil || probe.Version == nil {
		return 0, false
	}
	return *probe.Version, true
}
