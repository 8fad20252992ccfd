package sourcetest

import (
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source"
)

// AfterFirstRead is a source.NodeReader that runs Change once, right after its first read of either
// part (the node's signals or the pods' stats): memory freed while a sync reads the node.
type AfterFirstRead struct {
	source.NodeReader
	Change func()
}

// fire runs Change the first time only.
func (r *AfterFirstRead) fire() {
	if r.Change != nil {
		change := r.Change
		r.Change = nil
		change()
	}
}

// ReadNode implements source.NodeReader.
func (r *AfterFirstRead) ReadNode(now time.Time) (signal.Snapshot, error) {
	defer r.fire()
	return r.NodeReader.ReadNode(now)
}

// ReadPods implements source.NodeReader.
func (r *AfterFirstRead) ReadPods(s *signal.Snapshot, now time.Time) error {
	defer r.fire()
	return r.NodeReader.ReadPods(s, now)
}
