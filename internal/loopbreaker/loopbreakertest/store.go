package loopbreakertest

import (
	"context"
	"sync"
)

// Store is an in-memory loopbreaker.LedgerStore that counts its saves.
type Store struct {
	mu    sync.Mutex
	Data  []byte
	saves int
}

// Load implements loopbreaker.LedgerStore.
func (s *Store) Load(context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.Data...), nil
}

// Save implements loopbreaker.LedgerStore.
func (s *Store) Save(_ context.Context, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Data, s.saves = append([]byte(nil), b...), s.saves+1
	return nil
}

// Saves returns how often Save was called.
func (s *Store) Saves() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saves
}
