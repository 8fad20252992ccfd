package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
)

// The scenario language's reclaim commands (policy ReclaimAware):
//
//	memstat node|pods [active=Q] [inactive=Q] [dirty=Q] [writeback=Q] [shmem=Q] [refault=N] [activate=N]
//	psi node|pods some=F [full=F]                       (memory avg10, percent; psi node|pods none)
//	config reclaim.psiSome=F reclaim.psiFull=F reclaim.refaultRate=Q reclaim.window=D reclaim.horizon=D
//	config reclaim.action=true|false reclaim.maxBytes=Q reclaim.settle=D reclaim.minInterval=D
//	reclaimed NAME|pods freed=Q [err=TEXT] [at=OFFSET]   (a reclaim outcome for the next step)
//	unreclaimable [REASON...]                            (Input.ReclaimUnavailable; no reason: available)
//
// and on pod lines the same memstat keys (the pod's memory.stat). Workingset counters are pages of
// 4KiB; a memstat line replaces the scope's whole stat, a key it leaves out is absent.

// memStatArg sets one memstat key of m; it reports false for a key that is not one.
func memStatArg(m *signal.MemoryStat, k, v string) (bool, error) {
	sizes := map[string]**uint64{"active": &m.ActiveFile, "inactive": &m.InactiveFile, "dirty": &m.Dirty,
		"writeback": &m.Writeback, "shmem": &m.Shmem}
	counts := map[string]**uint64{"refault": &m.WorkingsetRefaultFile, "activate": &m.WorkingsetActivateFile}
	m.PageSize = 4096
	switch {
	case sizes[k] != nil:
		n, err := parseQuantity(v)
		*sizes[k] = signal.Uint64(uint64(n))
		return true, err
	case counts[k] != nil:
		n, err := strconv.ParseUint(v, 10, 64)
		*counts[k] = signal.Uint64(n)
		return true, err
	}
	return false, nil
}

func (m *machine) memstat(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("memstat needs node or pods")
	}
	dst, err := m.scope(args[0], &m.nodeMem, &m.podsMem)
	if err != nil {
		return err
	}
	ms := &signal.MemoryStat{PageSize: 4096}
	for _, a := range args[1:] {
		k, v := kv(a)
		took, err := memStatArg(ms, k, v)
		if !took && err == nil {
			err = fmt.Errorf("unknown memstat key %q", k)
		}
		if err != nil {
			return fmt.Errorf("memstat %s: %w", a, err)
		}
	}
	*dst = ms
	return nil
}

func (m *machine) scope(name string, node, pods **signal.MemoryStat) (**signal.MemoryStat, error) {
	switch name {
	case "node":
		return node, nil
	case "pods":
		return pods, nil
	}
	return nil, fmt.Errorf("scope %q: want node or pods", name)
}

func (m *machine) psiLine(args []string) error {
	if len(args) < 2 || (args[0] != "node" && args[0] != "pods") {
		return fmt.Errorf("psi needs node|pods and some=F [full=F] or none")
	}
	scope := args[0]
	if scope == "pods" {
		scope = "kubepods"
	}
	if m.psi == nil {
		m.psi = map[string]signal.Pressure{}
	}
	if args[1] == "none" {
		delete(m.psi, scope)
		return nil
	}
	p := signal.Pressure{Scope: scope, Resource: "memory"}
	for _, a := range args[1:] {
		k, v := kv(a)
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("psi %s: %w", a, err)
		}
		switch k {
		case "some":
			p.Some.Avg10 = f
		case "full":
			p.Full = &signal.PressureLine{Avg10: f}
		default:
			return fmt.Errorf("unknown psi key %q", k)
		}
	}
	m.psi[scope] = p
	return nil
}

// reclaimConfig applies a config key reclaim.*; it reports false for a key that is not one.
func (m *machine) reclaimConfig(k, v string) (bool, error) {
	r := &m.cfg.Reclaim
	var err error
	switch strings.TrimPrefix(k, "reclaim.") {
	case "psiSome":
		r.PSISomeAvg10, err = strconv.ParseFloat(v, 64)
	case "psiFull":
		r.PSIFullAvg10, err = strconv.ParseFloat(v, 64)
	case "refaultRate":
		r.RefaultRate, err = parseQuantity(v)
	case "window":
		r.RefaultWindow, err = time.ParseDuration(v)
	case "horizon":
		r.KubeletHorizon, err = time.ParseDuration(v)
	case "action":
		r.Action.Enabled, err = strconv.ParseBool(v)
	case "maxBytes":
		r.Action.MaxBytes, err = parseQuantity(v)
	case "settle":
		r.Action.Settle, err = time.ParseDuration(v)
	case "minInterval":
		r.Action.MinInterval, err = time.ParseDuration(v)
	default:
		return false, nil
	}
	return true, err
}

// reclaimInput adds the memstat and psi lines to a step's snapshot (PSI sorted by scope).
func (m *machine) reclaimInput(s *signal.Snapshot, now time.Time) {
	s.NodeMemory, s.PodsMemory = m.nodeMem, m.podsMem
	for _, scope := range []string{"kubepods", "node"} {
		if p, ok := m.psi[scope]; ok {
			p.Time = now
			s.PSI = append(s.PSI, p)
		}
	}
}

// reclaimed queues a reclaim outcome for the next step.
func (m *machine) reclaimed(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("reclaimed needs NAME|pods and freed=Q")
	}
	o := ReclaimOutcome{}
	if args[0] != "pods" {
		o.UID = "uid-" + args[0]
	}
	for _, a := range args[1:] {
		k, v := kv(a)
		var err error
		switch k {
		case "freed":
			o.Freed, err = parseQuantity(v)
		case "err":
			o.Err = v
		case "at":
			o.At, err = offset(v)
		default:
			err = fmt.Errorf("unknown reclaimed argument %q", a)
		}
		if err != nil {
			return err
		}
	}
	m.reclaims = append(m.reclaims, o)
	return nil
}
