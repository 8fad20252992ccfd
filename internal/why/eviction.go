package why

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Eviction details an eviction: what the evicting component said, the threshold and allocatable
// math, the ranking and what would have prevented it.
type Eviction struct {
	By       string `json:"by"`
	Resource string `json:"resource,omitempty"`
	Signal   string `json:"signal,omitempty"`
	// Threshold and Available are quoted from the message (the kubelet's "Threshold quantity",
	// the agent's "threshold" and "observed").
	Threshold string `json:"threshold,omitempty"`
	Available string `json:"available,omitempty"`
	Hard      *bool  `json:"hard,omitempty"`
	// Rung, Rank and DecidedBy are the agent's (its Event).
	Rung       string           `json:"rung,omitempty"`
	Rank       int              `json:"rank,omitempty"`
	DecidedBy  string           `json:"decidedBy,omitempty"`
	Message    string           `json:"message,omitempty"`
	Containers []ContainerUsage `json:"containers,omitempty"`
	// ConfiguredThresholds are the kubelet's thresholds on the resource, from its configuration now.
	ConfiguredThresholds []string     `json:"configuredThresholds,omitempty"`
	ConfigSource         string       `json:"configSource,omitempty"`
	Allocatable          *Allocatable `json:"allocatable,omitempty"`
	Ranking              *Ranking     `json:"ranking,omitempty"`
	// Missing names the facts a full answer needs that no longer exist.
	Missing    []string `json:"missing,omitempty"`
	Prevention []string `json:"prevention,omitempty"`
}

// ContainerUsage is a "Container X was using U, request is R" segment of the eviction message.
type ContainerUsage struct {
	Name    string `json:"name"`
	Usage   string `json:"usage"`
	Request string `json:"request"`
}

// Allocatable is the allocatable math of one resource, in the resource's quantities.
type Allocatable struct {
	Resource        string `json:"resource"`
	Capacity        string `json:"capacity"`
	KubeReserved    string `json:"kubeReserved"`
	SystemReserved  string `json:"systemReserved"`
	HardEviction    string `json:"hardEviction"`
	Allocatable     string `json:"allocatable"`
	PodsCgroupLimit string `json:"podsCgroupLimit"`
}

var (
	kubeletMsg   = regexp.MustCompile(`^The node was low on resource: ([\w.-]+)\. (?:Threshold quantity: ([^,]+), available: (\S+?)\. )?`)
	containerMsg = regexp.MustCompile(`Container (\S+) was using (\S+), request is (\S+), has larger consumption of [\w.-]+\.`)
	agentMsg     = regexp.MustCompile(`^Evicted by pressure-agent via (\S+): signal (\S+) observed (\S+), threshold (\S+) \((hard|soft)\)` +
		`(?:, rank (\d+))?(?: decided by ([^,]+))?, grace (\d+)s\.(?: (.*))?$`)
)

// kubeletDetail parses the kubelet's eviction message (status, Event or janitor record).
func kubeletDetail(msg string, evs []Event) *Eviction {
	d := &Eviction{By: ComponentKubelet, Message: strings.TrimSpace(msg)}
	parseKubeletMessage(d, msg)
	if len(evs) > 0 && d.Resource == "" {
		d.Resource = evs[0].Annotations["starved_resource"]
	}
	return d
}

func parseKubeletMessage(d *Eviction, msg string) {
	if m := kubeletMsg.FindStringSubmatch(msg + " "); m != nil {
		d.Resource, d.Threshold, d.Available = m[1], m[2], m[3]
	}
	for _, m := range containerMsg.FindAllStringSubmatch(msg, -1) {
		d.Containers = append(d.Containers, ContainerUsage{Name: m[1], Usage: m[2], Request: m[3]})
	}
}

// agentDetail parses the agent's PressureEviction Event, or falls back to the ledger.
func agentDetail(evs []Event, ev Evidence) *Eviction {
	d := &Eviction{By: ComponentAgent}
	if len(evs) == 0 {
		if len(ev.Ledger) > 0 {
			d.Signal, d.Rung = ev.Ledger[0].Signal, ev.Ledger[0].Rung
		}
		d.Resource = resourceOf(d.Signal)
		return d
	}
	d.Message = evs[0].Message
	if m := agentMsg.FindStringSubmatch(evs[0].Message); m != nil {
		hard := m[5] == "hard"
		d.Rung, d.Signal, d.Available, d.Threshold, d.Hard, d.DecidedBy = m[1], m[2], m[3], m[4], &hard, m[7]
		d.Rank, _ = strconv.Atoi(m[6])
		var k Eviction
		parseKubeletMessage(&k, m[9])
		d.Containers = k.Containers
	}
	d.Resource = resourceOf(d.Signal)
	return d
}

func resourceOf(sig string) string {
	if sig == "" {
		return ""
	}
	return string(signal.Signal(sig).Resource())
}

// completeEviction adds the configuration, allocatable math, ranking, missing facts and prevention.
func completeEviction(v *Verdict, ev Evidence) {
	d := v.Eviction
	if ev.Node == nil || ev.Node.Config == nil {
		d.Missing = append(d.Missing, "the kubelet's configuration (its /configz did not answer): thresholds and allocatable math")
	} else {
		d.ConfigSource = ev.Node.ConfigSource
		for _, t := range ev.Node.Config.Thresholds {
			if s := t.String(); (string(t.Signal.Resource()) == d.Resource || d.Resource == "") && !slices.Contains(d.ConfiguredThresholds, s) {
				d.ConfiguredThresholds = append(d.ConfiguredThresholds, s)
			}
		}
		res := d.Resource
		if res == string(signal.ResourceMemory) || res == "" {
			res = threshold.ResourceMemory
		}
		d.Allocatable = allocatableFor(ev, res)
	}
	d.Ranking = rerank(v, ev)
	d.Prevention = prevention(v, ev)
}

func allocatableFor(ev Evidence, res string) *Allocatable {
	if ev.Node == nil || ev.Node.Config == nil || len(ev.Node.Capacity) == 0 {
		return nil
	}
	na, _ := threshold.Allocatable(ev.Node.Capacity, *ev.Node.Config)
	r, ok := na.Get(res)
	if !ok {
		return nil
	}
	return &Allocatable{Resource: res, Capacity: r.Format(r.Capacity), KubeReserved: r.Format(r.KubeReserved),
		SystemReserved: r.Format(r.SystemReserved), HardEviction: r.Format(r.HardEviction),
		Allocatable: r.Format(r.Allocatable), PodsCgroupLimit: r.Format(r.PodsCgroupLimit)}
}

// bytes prints an amount of memory; 0 is "none" (an unset limit or request).
func bytes(v int64) string {
	if v == 0 {
		return "none"
	}
	return qty(v)
}

// qty prints an amount of memory as the kubelet does ("0" for zero).
func qty(v int64) string { return resource.NewQuantity(v, resource.BinarySI).String() }

func quantity(s string) (int64, bool) {
	q, err := threshold.ParseQuantity(s)
	if err != nil {
		return 0, false
	}
	return q.Value(), true
}
