package soak

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// FaultKind is one fault the test cluster can inject today.
type FaultKind string

// The faults of issue 32 that package test/cluster supports.
const (
	// FaultAgentPodDeleted deletes the agent pod: the DaemonSet makes a new one.
	FaultAgentPodDeleted FaultKind = "agent-pod-deleted"
	// FaultAgentSIGKILL kills the agent's process: the kubelet restarts its container.
	FaultAgentSIGKILL FaultKind = "agent-sigkill"
	// FaultAPIServerStop stops kube-apiserver for Fault.For (10-30 s), then starts it again.
	FaultAPIServerStop FaultKind = "apiserver-stop"
	// FaultLedgerCorrupt overwrites the node's ledger annotation with text that is not a ledger.
	FaultLedgerCorrupt FaultKind = "ledger-corrupt"
	// FaultKubeletRestart restarts the node's kubelet (cluster.Node.RestartKubelet): the pods keep running.
	FaultKubeletRestart FaultKind = "kubelet-restart"
	// FaultContainerdRestart restarts the node's containerd (cluster.Node.RestartContainerd): the
	// containers keep running under their shims.
	FaultContainerdRestart FaultKind = "containerd-restart"
)

// FaultKinds are every fault kind, in the order ParseFaults documents.
func FaultKinds() []FaultKind {
	return []FaultKind{FaultAgentPodDeleted, FaultAgentSIGKILL, FaultAPIServerStop, FaultLedgerCorrupt,
		FaultKubeletRestart, FaultContainerdRestart}
}

// ParseFaults reads a comma-separated list of fault kinds; "" and "all" are every kind, "none" is none.
func ParseFaults(s string) ([]FaultKind, error) {
	switch strings.TrimSpace(s) {
	case "", "all":
		return FaultKinds(), nil
	case "none":
		return nil, nil
	}
	var out []FaultKind
	for _, f := range strings.Split(s, ",") {
		k := FaultKind(strings.TrimSpace(f))
		if !slices.Contains(FaultKinds(), k) {
			return nil, fmt.Errorf("soak faults: unknown kind %q (want some of %v, all or none)", k, FaultKinds())
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

// Workload is one pod of an episode running the stress image.
type Workload struct {
	Name string   `json:"name"`
	Args []string `json:"args"`
	// Request and Limit are memory quantities ("": none). Guaranteed pods have both, equal.
	Request string `json:"request,omitempty"`
	Limit   string `json:"limit,omitempty"`
	// Priority is the PriorityClass name ("": the default, 0).
	Priority string `json:"priority,omitempty"`
	// Data mounts an emptyDir at /data (the file workloads write there).
	Data bool `json:"data,omitempty"`
}

// QOS is the pod's QoS class as the kubelet computes it from the memory request and limit (the
// Guaranteed workloads set the CPU request and limit too).
func (w Workload) QOS() string {
	switch {
	case w.Limit != "" && w.Limit == w.Request:
		return "Guaranteed"
	case w.Request != "" || w.Limit != "":
		return "Burstable"
	}
	return "BestEffort"
}

// Fault is the one fault of an episode, At after its workloads are created.
type Fault struct {
	Kind FaultKind `json:"kind"`
	At   Duration  `json:"at"`
	For  Duration  `json:"for,omitempty"` // FaultAPIServerStop only
}

// Duration is a time.Duration that reads as "12s" in the artefacts' JSON.
type Duration time.Duration

// MarshalText is the duration's String.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText parses what MarshalText wrote.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("soak duration %q: %w", b, err)
	}
	*d = Duration(v)
	return nil
}

// Plan is one episode, all drawn from (Seed, Episode).
type Plan struct {
	Seed    uint64 `json:"seed"`
	Episode int    `json:"episode"`
	// Workloads are the episode's pods in its own namespace: the pressure mix and the steady pods.
	Workloads []Workload `json:"workloads"`
	// Critical runs in kube-system with PriorityClass system-node-critical.
	Critical Workload `json:"critical"`
	// PDB is the template of the PDB-protected Deployment's pods; PDBReplicas of them, PDBMinAvailable
	// kept by the PodDisruptionBudget.
	PDB             Workload `json:"pdb"`
	PDBReplicas     int      `json:"pdbReplicas"`
	PDBMinAvailable int      `json:"pdbMinAvailable"`
	Fault           *Fault   `json:"fault,omitempty"`
}

// DrawConfig says which faults an episode may draw and how often.
type DrawConfig struct {
	// Faults are the kinds to draw from; none: no episode has a fault.
	Faults []FaultKind
	// FaultEpisode, when >= 0, is the only episode with a fault (the short version's); else each
	// episode has one with probability FaultChance.
	FaultEpisode int
	FaultChance  float64
	// FaultWithin bounds the fault's moment: uniform in [5 s, FaultWithin).
	FaultWithin time.Duration
}

// PriorityClasses the steady and pressure pods draw from ("" is none), created by the driver.
const (
	PriorityLow  = "soak-low"
	PriorityHigh = "soak-high"
)

// Hog rates: 16 MiB/s up to 0, which the stress image reads as unpaced (the fastest the node reaches).
var hogRates = []string{"16Mi", "64Mi", "256Mi", "0"}

// Draw draws episode's Plan from rand.NewPCG(seed, episode): the same (seed, episode) gives the same
// plan whatever ran before it.
func Draw(seed uint64, episode int, cfg DrawConfig) Plan {
	r := rand.New(rand.NewPCG(seed, uint64(episode)))
	p := Plan{Seed: seed, Episode: episode, PDBReplicas: 2, PDBMinAvailable: 1}
	prio := func() string { return []string{"", PriorityLow, PriorityHigh}[r.IntN(3)] }
	for i := range 1 + r.IntN(3) {
		w := Workload{Name: fmt.Sprintf("hog-%d", i), Priority: prio(),
			Args: []string{"mem", "--rate", hogRates[r.IntN(len(hogRates))], "--target", fmt.Sprintf("%dMi", 256+64*r.IntN(14))}}
		if r.IntN(2) == 0 {
			w.Request = "64Mi"
		}
		p.Workloads = append(p.Workloads, w)
	}
	if r.IntN(2) == 0 {
		p.Workloads = append(p.Workloads, Workload{Name: "cache", Data: true, Priority: prio(),
			Args: []string{"cache", "--path", "/data/f", "--size", fmt.Sprintf("%dMi", 256*(1+r.IntN(4))), "--sparse", "--passes", "2"}})
	}
	if r.IntN(3) == 0 {
		p.Workloads = append(p.Workloads, Workload{Name: "thrash", Data: true, Priority: prio(), Request: "32Mi",
			Args: []string{"thrash", "--path", "/data/f", "--size", fmt.Sprintf("%dMi", 512*(1+r.IntN(2))), "--sparse", "--random", "--passes", "3"}})
	}
	if r.IntN(2) == 0 {
		p.Workloads = append(p.Workloads, Workload{Name: "fork", Priority: prio(),
			Args: []string{"fork", "--count", fmt.Sprint(50 * (1 + r.IntN(8)))}})
	}
	if r.IntN(2) == 0 {
		p.Workloads = append(p.Workloads, Workload{Name: "disk", Data: true, Priority: prio(),
			Args: []string{"disk", "--path", "/data/fill", "--rate", "16Mi", "--target", fmt.Sprintf("%dMi", 64*(1+r.IntN(4)))}})
	}
	if r.IntN(2) == 0 {
		p.Workloads = append(p.Workloads, Workload{Name: "files", Data: true, Priority: prio(),
			Args: []string{"files", "--path", "/data/d", "--count", fmt.Sprint(1000 * (1 + r.IntN(20))), "--rate", "2000"}})
	}
	p.Workloads = append(p.Workloads,
		Workload{Name: "steady-guaranteed", Request: "96Mi", Limit: "96Mi", Priority: prio(), Args: []string{"mem", "--rate", "0", "--target", "48Mi"}},
		Workload{Name: "steady-burstable", Request: "64Mi", Priority: prio(), Args: []string{"mem", "--rate", "0", "--target", "96Mi"}},
		Workload{Name: "steady-besteffort", Priority: prio(), Args: []string{"sleep"}})
	p.Critical = Workload{Name: fmt.Sprintf("soak-critical-%d-%d", seed, episode), Request: "32Mi", Priority: "system-node-critical",
		Args: []string{"mem", "--rate", "0", "--target", "32Mi"}}
	p.PDB = Workload{Name: "pdb", Request: "32Mi", Priority: prio(), Args: []string{"mem", "--rate", "0", "--target", "64Mi"}}
	// The fault is drawn last and always (the draw count does not depend on whether it is kept), so
	// changing the fault settings changes no workload.
	fault := Fault{Kind: FaultAgentPodDeleted, At: Duration(5*time.Second + time.Duration(r.Int64N(int64(max(time.Second, cfg.FaultWithin-5*time.Second))))),
		For: Duration(10*time.Second + time.Duration(r.Int64N(int64(20*time.Second))))}
	kind, chance := r.IntN(1<<30), r.Float64()
	keep := chance < cfg.FaultChance
	if cfg.FaultEpisode >= 0 {
		keep = episode == cfg.FaultEpisode
	}
	if keep && len(cfg.Faults) > 0 {
		fault.Kind = cfg.Faults[kind%len(cfg.Faults)]
		if fault.Kind != FaultAPIServerStop {
			fault.For = 0
		}
		p.Fault = &fault
	}
	return p
}

// Namespace is the episode's namespace.
func (p Plan) Namespace() string { return fmt.Sprintf("soak-%d-%d", p.Seed, p.Episode) }
