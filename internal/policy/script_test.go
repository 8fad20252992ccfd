package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// machine interprets the scenario language of testdata/*.txt (golden.RunScripts for the format):
//
//	config KEY=VALUE ...    policy=pressure|kubelet headroom.SIGNAL=Q|P% maxPerSync=N maxPerMinute=N
//	                        killLead=D evictionLead=D ttl=D margin=D pdbRetry=D hysteresis=D dryRun=true|false
//	kubelet evictionHard|evictionSoft|evictionSoftGracePeriod|evictionMinimumReclaim SIGNAL=VALUE ...
//	pod NAME [qos=Q] [request=Q] [usage=Q] [priority=N] [threads=N] [procs=N] [tgps=N] [nostats]
//	         [critical=static|mirror|priority] [deleted=OFFSET]    (deleted: the deletion timestamp)
//	delete NAME
//	observe SIGNAL=AVAILABLE|none [capacity=Q]                       (stamped at the next step's time)
//	ledger NAME at=OFFSET [rung=R]                                   (an unsettled ledger entry)
//	outcome NAME evict|kill RESULT [api=answered|unavailable] [at=OFFSET]
//	step t=OFFSET [persisting]                                       (prints the plan)
//	reclaimable images=Q [logs=Q]        (the shell's estimate of what the kubelet's GC could free)
//	layout one|dedicated|split           (the filesystem layout; one by default)
//	memstat ... psi ... config reclaim.*                             (script_reclaim_test.go)
//
// Offsets are durations from a fixed epoch. The config starts at DefaultConfig with the trend kill on
// (DefaultKillLead); the kubelet has no thresholds until a kubelet line sets them.
type machine struct {
	cfg      Config
	kubelet  threshold.Input
	pods     []Pod
	obs      map[signal.Signal]signal.Observation
	ledger   []InFlight
	outcomes []Outcome
	state    State
	// nodeMem, podsMem and psi are the memstat and psi lines.
	nodeMem, podsMem *signal.MemoryStat
	psi              map[string]signal.Pressure
	// reclaimable and layout are the reclaimable and layout lines.
	reclaimable *Reclaimable
	layout      signal.FilesystemLayout
	// reclaims and unreclaimable are the reclaimed and unreclaimable lines.
	reclaims      []ReclaimOutcome
	unreclaimable string
}

func newMachine() *machine {
	cfg := DefaultConfig()
	cfg.KillLead = DefaultKillLead
	return &machine{cfg: cfg, obs: map[signal.Signal]signal.Observation{},
		kubelet: threshold.Input{EvictionHardSet: true, EvictionHard: map[string]string{}, EnforceNodeAllocatableSet: true,
			EnforceNodeAllocatable: []string{"pods"}}}
}

// run executes one command line and returns its output ("" for commands without output).
func (m *machine) run(line string) (string, error) {
	f := strings.Fields(line)
	args := f[1:]
	var err error
	switch f[0] {
	case "config":
		err = m.config(args)
	case "kubelet":
		err = m.kubeletConfig(args)
	case "pod":
		err = m.pod(args)
	case "delete":
		err = m.deletePod(args)
	case "observe":
		err = m.observe(args)
	case "ledger":
		err = m.ledgerEntry(args)
	case "outcome":
		err = m.outcome(args)
	case "step":
		return m.step(args)
	case "memstat":
		err = m.memstat(args)
	case "psi":
		err = m.psiLine(args)
	case "reclaimable":
		err = m.reclaimableLine(args)
	case "layout":
		err = m.layoutLine(args)
	case "reclaimed":
		err = m.reclaimed(args)
	case "unreclaimable":
		m.unreclaimable = strings.Join(args, " ")
	default:
		err = fmt.Errorf("unknown command %q", f[0])
	}
	return "", err
}

func kv(arg string) (string, string) {
	k, v, _ := strings.Cut(arg, "=")
	return k, v
}

func offset(v string) (time.Time, error) {
	d, err := time.ParseDuration(v)
	return t0.Add(d), err
}

func parseQuantity(v string) (int64, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return 0, err
	}
	return q.Value(), nil
}

func (m *machine) config(args []string) error {
	durations := map[string]*time.Duration{"killLead": &m.cfg.KillLead, "evictionLead": &m.cfg.EvictionLead, "ttl": &m.cfg.InFlightTTL, "margin": &m.cfg.TerminatingMargin,
		"pdbRetry": &m.cfg.PDBRetry, "hysteresis": &m.cfg.TaintHysteresis}
	ints := map[string]*int{"maxPerSync": &m.cfg.MaxEvictionsPerSync, "maxPerMinute": &m.cfg.MaxEvictionsPerMinute}
	for _, a := range args {
		k, v := kv(a)
		var err error
		switch {
		case durations[k] != nil:
			*durations[k], err = time.ParseDuration(v)
		case ints[k] != nil:
			*ints[k], err = strconv.Atoi(v)
		case k == "policy":
			m.cfg.Policy = Name(v)
		case k == "dryRun":
			m.cfg.DryRun, err = strconv.ParseBool(v)
		case strings.HasPrefix(k, "reclaim."):
			var took bool
			if took, err = m.reclaimConfig(k, v); !took {
				err = fmt.Errorf("unknown config %q", a)
			}
		case strings.HasPrefix(k, "headroom."):
			err = m.headroom(signal.Signal(strings.TrimPrefix(k, "headroom.")), v)
		default:
			err = fmt.Errorf("unknown config %q", a)
		}
		if err != nil {
			return fmt.Errorf("config %s: %w", a, err)
		}
	}
	return nil
}

func (m *machine) headroom(sig signal.Signal, v string) error {
	if p, ok := strings.CutSuffix(v, "%"); ok {
		f, err := strconv.ParseFloat(p, 32)
		m.cfg.Headroom[sig] = threshold.Value{Percentage: float32(f / 100)}
		return err
	}
	q, err := resource.ParseQuantity(v)
	m.cfg.Headroom[sig] = threshold.Value{Quantity: &q}
	return err
}

func (m *machine) kubeletConfig(args []string) error {
	maps := map[string]*map[string]string{"evictionHard": &m.kubelet.EvictionHard, "evictionSoft": &m.kubelet.EvictionSoft,
		"evictionSoftGracePeriod": &m.kubelet.EvictionSoftGracePeriod, "evictionMinimumReclaim": &m.kubelet.EvictionMinimumReclaim}
	target, ok := maps[args[0]]
	if !ok {
		return fmt.Errorf("unknown kubelet setting %q", args[0])
	}
	if *target == nil {
		*target = map[string]string{}
	}
	for _, a := range args[1:] {
		k, v := kv(a)
		(*target)[k] = v
	}
	return nil
}

func (m *machine) observe(args []string) error {
	k, v := kv(args[0])
	sig := signal.Signal(k)
	if v == "none" {
		delete(m.obs, sig)
		return nil
	}
	o := m.obs[sig]
	var err error
	if o.Available, err = parseQuantity(v); err != nil {
		return err
	}
	for _, a := range args[1:] {
		k, v := kv(a)
		if k != "capacity" {
			return fmt.Errorf("unknown observe argument %q", a)
		}
		if o.Capacity, err = parseQuantity(v); err != nil {
			return err
		}
	}
	m.obs[sig] = o
	return nil
}

func (m *machine) ledgerEntry(args []string) error {
	e := InFlight{UID: "uid-" + args[0], Rung: "eviction-api"}
	for _, a := range args[1:] {
		k, v := kv(a)
		var err error
		switch k {
		case "at":
			e.At, err = offset(v)
		case "rung":
			e.Rung = v
		default:
			err = fmt.Errorf("unknown ledger argument %q", a)
		}
		if err != nil {
			return err
		}
	}
	m.ledger = append(m.ledger, e)
	return nil
}

func (m *machine) outcome(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("outcome needs NAME ACTION RESULT")
	}
	o := Outcome{UID: "uid-" + args[0], Action: Action(args[1]), Result: Result(args[2])}
	for _, a := range args[3:] {
		k, v := kv(a)
		var err error
		switch k {
		case "api":
			o.API = Contact(v)
		case "at":
			o.At, err = offset(v)
		default:
			err = fmt.Errorf("unknown outcome argument %q", a)
		}
		if err != nil {
			return err
		}
	}
	m.outcomes = append(m.outcomes, o)
	return nil
}

func (m *machine) reclaimableLine(args []string) error {
	r := &Reclaimable{Source: "scenario"}
	for _, a := range args {
		k, v := kv(a)
		n, err := parseQuantity(v)
		switch {
		case err != nil:
			return fmt.Errorf("reclaimable %s: %w", a, err)
		case k == "images":
			r.UnusedImages = n
		case k == "logs":
			r.DeadContainerLogs = n
		default:
			return fmt.Errorf("unknown reclaimable argument %q", a)
		}
	}
	m.reclaimable = r
	return nil
}

func (m *machine) layoutLine(args []string) error {
	layouts := map[string]signal.FilesystemLayout{"one": {}, "dedicated": {DedicatedImageFs: true},
		"split": {DedicatedImageFs: true, SplitContainerFs: true}}
	l, ok := layouts[args[0]]
	if !ok {
		return fmt.Errorf("unknown layout %q: want one, dedicated or split", args[0])
	}
	m.layout = l
	return nil
}
