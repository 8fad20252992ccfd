package threshold

import (
	"errors"
	"fmt"

	"github.com/kube-pressure/pressure/internal/signal"
)

// UpdateContainerFsThresholds derives the containerfs thresholds from the filesystem layout like
// the kubelet's UpdateContainerFsThresholds, which runs once on the first sync after filesystem
// detection:
//
//   - single filesystem (!imageFs && !splitContainerFs) or images on a dedicated filesystem with
//     writable layers on nodefs (imageFs && splitContainerFs): containerfs copies nodefs;
//   - dedicated imagefs holding images and writable layers (imageFs && !splitContainerFs):
//     containerfs copies imagefs;
//   - !imageFs && splitContainerFs: nothing changes.
//
// For each of hard/soft containerfs.available/inodesFree, a user-configured threshold is replaced
// in place (the returned error lists every one ignored, where the kubelet logs only the last) and a
// missing one is appended. A copy of a source threshold that does not exist is inert: empty
// Operator, zero Value, never met. The result is sorted; the input is not modified.
func UpdateContainerFsThresholds(ts []Threshold, imageFs, splitContainerFs bool) ([]Threshold, error) {
	out := append([]Threshold{}, ts...)
	var from signal.Signal
	var fromInodes signal.Signal
	switch {
	case imageFs == splitContainerFs:
		from, fromInodes = signal.NodeFsAvailable, signal.NodeFsInodesFree
	case imageFs:
		from, fromInodes = signal.ImageFsAvailable, signal.ImageFsInodesFree
	default:
		return out, nil
	}
	src := lastBySignal(out)
	var errs []error
	for _, d := range []struct {
		to, from signal.Signal
		hard     bool
	}{
		{signal.ContainerFsAvailable, from, true},
		{signal.ContainerFsAvailable, from, false},
		{signal.ContainerFsInodesFree, fromInodes, true},
		{signal.ContainerFsInodesFree, fromInodes, false},
	} {
		s := src[key{d.from, d.hard}]
		derived := Threshold{Signal: d.to, Operator: s.Operator, Value: s.Value, GracePeriod: s.GracePeriod,
			MinReclaim: s.MinReclaim}
		if idx, ok := src[key{d.to, d.hard}]; ok {
			out[idx.index] = derived
			errs = append(errs, fmt.Errorf("found %s for %s eviction. ignoring", d.to, hardness(d.hard)))
			continue
		}
		out = append(out, derived)
	}
	SortThresholds(out)
	return out, errors.Join(errs...)
}

type key struct {
	sig  signal.Signal
	hard bool
}

type indexed struct {
	Threshold
	index int
}

// lastBySignal returns, per (signal, hard), the last threshold of that kind and its index, as the
// kubelet's loop keeps the last one it sees. The kubelet lists evictionHard thresholds before
// evictionSoft ones, so a soft threshold with grace 0s wins over a hard one on the same signal.
func lastBySignal(ts []Threshold) map[key]indexed {
	m := map[key]indexed{}
	for i, t := range ts {
		k := key{t.Signal, t.IsHard()}
		if prev, ok := m[k]; ok && prev.FromSoft && !t.FromSoft {
			continue
		}
		m[k] = indexed{t, i}
	}
	return m
}

func hardness(hard bool) string {
	if hard {
		return "hard"
	}
	return "soft"
}
