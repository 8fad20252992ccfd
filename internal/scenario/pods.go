package scenario

import (
	"fmt"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/sim"
)

var podFields = []string{"name", "namespace", "priority", "critical", "qos", "requests", "limits", "start", "usage",
	"terminationGracePeriodSeconds", "pdb", "owner"}

// pods parses the pods list.
func (d *doc) pods(s *Scenario, n *yaml.Node) {
	items := d.sequence("pods", n)
	if len(items) > maxPods {
		d.fail("pods", n, "%d pods: at most %d", len(items), maxPods)
		return
	}
	seen := map[string]int{}
	for i, item := range items {
		path := fmt.Sprintf("pods[%d]", i)
		p, ok := d.pod(path, item)
		if !ok {
			continue
		}
		key := podKey(p.Candidate)
		if j, dup := seen[key]; dup {
			d.fail(path+".name", item, "pod %s is also pods[%d]: names are unique per namespace", key, j)
			continue
		}
		seen[key] = i
		p.Candidate.UID = fmt.Sprintf("sim-%04d-%s", i, key)
		s.Pods = append(s.Pods, p)
	}
}

func podKey(c rank.Candidate) string { return c.Namespace + "/" + c.Name }

// pod parses one pod.
func (d *doc) pod(path string, n *yaml.Node) (sim.ModelPod, bool) {
	f := d.mapping(path, n, podFields...)
	errs := len(d.errs)
	var p sim.ModelPod
	c := &p.Candidate
	c.Namespace = "default"
	if v, ok := f["name"]; !ok {
		d.fail(path+".name", n, "%v", errRequired)
	} else if name, good := d.scalar(path+".name", v); good {
		if name == "" {
			d.fail(path+".name", v, "must not be empty")
		}
		c.Name = name
	}
	if v, ok := f["namespace"]; ok {
		if ns, good := d.scalar(path+".namespace", v); good && ns != "" {
			c.Namespace = ns
		}
	}
	if v, ok := f["priority"]; ok {
		prio, _ := d.integer(path+".priority", v, -1<<31, 1<<31-1)
		c.Priority = int32(prio)
	}
	if v, ok := f["terminationGracePeriodSeconds"]; ok {
		if g, good := d.integer(path+".terminationGracePeriodSeconds", v, 0, 1<<31); good {
			c.TerminationGracePeriodSeconds = rank.Int64(g)
		}
	}
	res := d.resources(path, f)
	p.Limit = res.limits["memory"]
	c.MemoryRequest = res.requests["memory"]
	c.QOSClass = qos(res)
	if v, ok := f["qos"]; ok {
		if want, good := d.scalar(path+".qos", v); good && want != c.QOSClass {
			d.fail(path+".qos", v, "the requests and limits give %s (Guaranteed: cpu and memory limits, requests equal to "+
				"them; BestEffort: none at all)", c.QOSClass)
		}
	}
	c.Containers = []rank.Container{{Name: c.Name, MemoryRequest: rank.Amount{Value: c.MemoryRequest}}}
	d.critical(path, f, c)
	if v, ok := f["start"]; ok {
		p.Start, _ = d.duration(path+".start", v)
	}
	if v, ok := f["usage"]; ok {
		p.Usage, _ = d.ramp(path+".usage", v)
	}
	if v, ok := f["owner"]; ok {
		c.OwnerKind, c.OwnerName = d.owner(path+".owner", v)
	}
	if v, ok := f["pdb"]; ok {
		switch b, _ := d.scalar(path+".pdb", v); b {
		case "true":
			p.PDB = true
		case "false":
		default:
			d.fail(path+".pdb", v, "want true or false")
		}
	}
	return p, len(d.errs) == errs
}

// owner parses a pod's owner, KIND/NAME in the pod's namespace ("Deployment/web"): pods of the same
// owner are one workload to the agent's loop rules (a later one is a replacement).
func (d *doc) owner(path string, n *yaml.Node) (kind, name string) {
	v, ok := d.scalar(path, n)
	if !ok {
		return "", ""
	}
	kind, name, found := strings.Cut(v, "/")
	if !found || kind == "" || name == "" || strings.Contains(name, "/") {
		d.fail(path, n, "want KIND/NAME in the pod's namespace, e.g. Deployment/web")
		return "", ""
	}
	return kind, name
}

// resources holds a pod's requests and limits (cpu in millicores, memory in bytes).
type resources struct {
	requests, limits map[string]int64
	given            bool
}

func (d *doc) resources(path string, f map[string]*yaml.Node) resources {
	r := resources{requests: map[string]int64{}, limits: map[string]int64{}}
	for _, kind := range []string{"requests", "limits"} {
		v, ok := f[kind]
		if !ok {
			continue
		}
		dst := r.requests
		if kind == "limits" {
			dst = r.limits
		}
		m := d.mapping(path+"."+kind, v, "memory", "cpu")
		for _, res := range []string{"cpu", "memory"} {
			q, ok := m[res]
			if !ok {
				continue
			}
			r.given = true
			if res == "cpu" {
				if milli, good := d.cpu(path+"."+kind+".cpu", q); good {
					dst[res] = milli
				}
				continue
			}
			if b, good := d.bytes(path+"."+kind+"."+res, q); good {
				dst[res] = b
			}
		}
	}
	for res, lim := range r.limits {
		if _, ok := r.requests[res]; !ok {
			r.requests[res] = lim // the API defaults a missing request to the limit
		} else if r.requests[res] > lim {
			d.fail(path+".requests."+res, f["requests"], "request %d above limit %d", r.requests[res], lim)
		}
	}
	return r
}

func (d *doc) cpu(path string, n *yaml.Node) (int64, bool) { return value(d, path, n, parseCPU) }

// qos is the pod's QoS class as the API computes it for a single container.
func qos(r resources) string {
	switch {
	case !r.given:
		return rank.QOSBestEffort
	case r.limits["cpu"] > 0 && r.limits["memory"] > 0 && r.requests["cpu"] == r.limits["cpu"] &&
		r.requests["memory"] == r.limits["memory"]:
		return rank.QOSGuaranteed
	}
	return rank.QOSBurstable
}

// critical parses critical: static | mirror; a priority of 2000000000 or more is critical too.
func (d *doc) critical(path string, f map[string]*yaml.Node, c *rank.Candidate) {
	if c.Priority >= rank.SystemCriticalPriority {
		c.Critical = true
		c.CriticalReason = "priority " + strconv.Itoa(int(c.Priority)) + " >= " + strconv.Itoa(int(rank.SystemCriticalPriority))
	}
	v, ok := f["critical"]
	if !ok {
		return
	}
	kind, good := d.scalar(path+".critical", v)
	if !good {
		return
	}
	switch kind {
	case "static", "mirror":
		c.Critical, c.CriticalReason = true, kind+" pod"
	case "false", "":
	default:
		d.fail(path+".critical", v, "want static or mirror (a priority of %d or more is critical by itself)",
			rank.SystemCriticalPriority)
	}
}
