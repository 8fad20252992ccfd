package decision

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/rank/ranktest"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// machine interprets the scenario language of testdata/*.txt:
//
//	config evictionHard|evictionSoft|evictionSoftGracePeriod|evictionMinimumReclaim SIGNAL=VALUE ...
//	config transition=5m maxPodGrace=60 enforce=pods|none localStorageCapacityIsolation=true|false
//	layout single|dedicated|split
//	pod NAME [qos=Q] [request=Q] [usage=Q] [priority=N] [tgps=N] [procs=N] [rootfs=Q] [logs=Q]
//	         [ephemeral-request=Q] [ephemeral-limit=Q] [pod-used=Q] [emptydir=Q] [emptydir-used=Q]
//	         [nostats] [critical=static|mirror|priority] [tolerates]
//	delete NAME
//	observe SIGNAL=AVAILABLE|none [capacity=Q] [at=DURATION]
//	reclaim SIGNAL=AVAILABLE [capacity=Q] [at=DURATION]  (observations after node-level reclaim)
//	step t=DURATION                                     (prints the trace and the decision)
//	admit NAME                                          (admission of a pod under the reported conditions)
//	predict [ignore-grace]                              (the full predicted eviction order)
//
// Times are offsets from a fixed epoch. Without a reclaim command node-level reclaim frees nothing.
type machine struct {
	in      threshold.Input
	layout  signal.FilesystemLayout
	pods    []rank.Candidate
	obs     map[signal.Signal]signal.Observation
	reclaim map[signal.Signal]signal.Observation
	state   State
	now     time.Time
	// noIsolation is localStorageCapacityIsolation=false.
	noIsolation bool
}

func newMachine() *machine {
	return &machine{obs: map[signal.Signal]signal.Observation{}, now: t0,
		in: threshold.Input{EvictionHardSet: true, EvictionHard: map[string]string{}, EnforceNodeAllocatableSet: true}}
}

// run executes one command line and returns its output ("" for commands without output).
func (m *machine) run(line string) (string, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return "", nil
	}
	args := f[1:]
	switch f[0] {
	case "config":
		return "", m.config(args)
	case "layout":
		return "", m.setLayout(args)
	case "pod":
		return "", m.pod(args)
	case "delete":
		return "", m.deletePod(args)
	case "observe":
		return "", observe(m.obs, args)
	case "reclaim":
		if m.reclaim == nil {
			m.reclaim = map[signal.Signal]signal.Observation{}
		}
		return "", observe(m.reclaim, args)
	case "step":
		return m.step(args)
	case "admit":
		return m.admit(args)
	case "predict":
		return m.predict(args)
	}
	return "", fmt.Errorf("unknown command %q", f[0])
}

func kv(arg string) (string, string) {
	k, v, _ := strings.Cut(arg, "=")
	return k, v
}

func (m *machine) config(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("config needs arguments")
	}
	maps := map[string]*map[string]string{"evictionHard": &m.in.EvictionHard, "evictionSoft": &m.in.EvictionSoft,
		"evictionSoftGracePeriod": &m.in.EvictionSoftGracePeriod, "evictionMinimumReclaim": &m.in.EvictionMinimumReclaim}
	if target, ok := maps[args[0]]; ok {
		if *target == nil {
			*target = map[string]string{}
		}
		for _, a := range args[1:] {
			k, v := kv(a)
			(*target)[k] = v
		}
		return nil
	}
	for _, a := range args {
		k, v := kv(a)
		switch k {
		case "transition":
			d, err := time.ParseDuration(v)
			if err != nil {
				return err
			}
			m.in.EvictionPressureTransitionPeriod = &d
		case "maxPodGrace":
			n, err := strconv.Atoi(v)
			if err != nil {
				return err
			}
			m.in.EvictionMaxPodGracePeriod = int32(n)
		case "localStorageCapacityIsolation":
			on, err := strconv.ParseBool(v)
			if err != nil {
				return err
			}
			m.noIsolation = !on
		case "enforce":
			m.in.EnforceNodeAllocatable = nil
			if v != "none" {
				m.in.EnforceNodeAllocatable = strings.Split(v, ",")
			}
		default:
			return fmt.Errorf("unknown config %q", a)
		}
	}
	return nil
}

func (m *machine) setLayout(args []string) error {
	layouts := map[string]signal.FilesystemLayout{"single": {}, "dedicated": {DedicatedImageFs: true},
		"split": {DedicatedImageFs: true, SplitContainerFs: true}}
	l, ok := layouts[strings.Join(args, "")]
	if !ok {
		return fmt.Errorf("unknown layout %q", args)
	}
	m.layout = l
	return nil
}

func quantity(v string) (int64, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return 0, err
	}
	return q.Value(), nil
}

func (m *machine) deletePod(args []string) error {
	for i, p := range m.pods {
		if len(args) == 1 && p.Name == args[0] {
			m.pods = append(m.pods[:i], m.pods[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("no pod %q", args)
}

func observe(into map[signal.Signal]signal.Observation, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("observe needs SIGNAL=VALUE")
	}
	k, v := kv(args[0])
	sig := signal.Signal(k)
	if v == "none" {
		delete(into, sig)
		return nil
	}
	o := into[sig]
	var err error
	if o.Available, err = quantity(v); err != nil {
		return err
	}
	for _, a := range args[1:] {
		k, v := kv(a)
		switch k {
		case "capacity":
			o.Capacity, err = quantity(v)
		case "at":
			var d time.Duration
			d, err = time.ParseDuration(v)
			o.Time = t0.Add(d)
		default:
			err = fmt.Errorf("unknown observe argument %q", a)
		}
		if err != nil {
			return err
		}
	}
	into[sig] = o
	return nil
}

func (m *machine) configuration() (threshold.Config, error) {
	cfg, err := threshold.ParseConfig(m.in)
	if err != nil {
		return cfg, err
	}
	cfg.Thresholds, _ = threshold.UpdateContainerFsThresholds(cfg.Thresholds, m.layout.DedicatedImageFs, m.layout.SplitContainerFs)
	return cfg, nil
}

func (m *machine) input(args []string) (Input, error) {
	cfg, err := m.configuration()
	if err != nil {
		return Input{}, err
	}
	for _, a := range args {
		k, v := kv(a)
		if k == "t" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return Input{}, err
			}
			m.now = t0.Add(d)
		}
	}
	s := signal.Snapshot{Observations: copyObservations(m.obs), Filesystems: m.layout}
	return Input{Now: m.now, Snapshot: s, Candidates: append([]rank.Candidate{}, m.pods...), Config: cfg,
		DisableLocalStorageCapacityIsolation: m.noIsolation}, nil
}

func (m *machine) step(args []string) (string, error) {
	in, err := m.input(args)
	if err != nil {
		return "", err
	}
	next, d := Step(m.state, in)
	if d.NodeReclaim != nil && d.NodeReclaim.Pending {
		after := signal.Snapshot{Observations: copyObservations(m.obs), Filesystems: m.layout}
		for k, v := range m.reclaim {
			after.Observations[k] = v
		}
		in.AfterReclaim = &after
		next, d = Step(m.state, in)
	}
	m.state = next
	return render(in, d), nil
}

func render(in Input, d Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "t=%s\n", in.Now.Sub(t0))
	b.WriteString(d.Trace.String())
	fmt.Fprintf(&b, "=> conditions %v\n", d.Conditions)
	for _, e := range d.Evictions {
		fmt.Fprintf(&b, "=> evict %s/%s path=%s label=%s grace=%d effective=%d message=%q\n", e.Namespace, e.Name,
			e.Path, e.MetricLabel, e.Grace.Override, e.Grace.Effective, e.Message)
		if len(e.Annotations) > 0 {
			keys := make([]string, 0, len(e.Annotations))
			for k := range e.Annotations {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, "=>   annotation %s=%q\n", k, e.Annotations[k])
			}
		}
	}
	return b.String()
}

func (m *machine) admit(args []string) (string, error) {
	for _, p := range m.pods {
		if len(args) == 1 && p.Name == args[0] {
			ok, msg := Admit(m.state.Conditions, p)
			if ok {
				return "admitted\n", nil
			}
			return fmt.Sprintf("rejected %q\n", RejectedPrefix+msg), nil
		}
	}
	return "", fmt.Errorf("no pod %q", args)
}

func (m *machine) predict(args []string) (string, error) {
	in, err := m.input(nil)
	if err != nil {
		return "", err
	}
	p := PredictOrder(m.state, in, PredictOptions{IgnoreGrace: len(args) == 1 && args[0] == "ignore-grace"})
	var b strings.Builder
	for _, e := range p.LocalStorage {
		fmt.Fprintf(&b, "local-storage %s/%s label=%s used=%d limit=%s grace=%d message=%q\n", e.Namespace, e.Name,
			e.MetricLabel, e.Limit.Used, e.Limit.Limit, e.Grace.Override, e.Message)
	}
	for _, e := range p.LocalStorageRefused {
		fmt.Fprintf(&b, "local-storage refused %s/%s critical (%s) label=%s message=%q\n", e.Eviction.Namespace,
			e.Eviction.Name, e.CriticalReason, e.Eviction.MetricLabel, e.Eviction.Message)
	}
	for i, e := range p.Order {
		crit := ""
		if e.Critical {
			crit = " critical (" + e.CriticalReason + ")"
		}
		fmt.Fprintf(&b, "%d. %s/%s%s by=%q grace=%d message=%q\n", i+1, e.Eviction.Namespace, e.Eviction.Name, crit,
			e.Eviction.DecidedBy, e.Eviction.Grace.Override, e.Eviction.Message)
	}
	if len(p.Order) == 0 && len(p.LocalStorage) == 0 {
		b.WriteString("no eviction predicted\n")
	}
	return b.String(), nil
}

// pod adds or replaces a pod (ranktest.Pod: the pod line's language).
func (m *machine) pod(args []string) error {
	c, err := ranktest.Pod(args, nil)
	if err != nil {
		return err
	}
	for i := range m.pods {
		if m.pods[i].Name == c.Name {
			m.pods[i] = c
			return nil
		}
	}
	m.pods = append(m.pods, c)
	return nil
}
