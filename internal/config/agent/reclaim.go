package agent

import (
	"path"
	"strings"
)

// convertReclaim resolves the reclaim rung's root: CgroupRoot joined with reclaim.podsCgroup.
func convertReclaim(c *AgentConfiguration) ReclaimConfig {
	if !*c.Reclaim.Enabled {
		return ReclaimConfig{}
	}
	return ReclaimConfig{Enabled: true, Root: path.Join(*c.CgroupRoot, *c.Reclaim.PodsCgroup)}
}

// reclaim checks reclaim.podsCgroup: required when reclaim is on, relative, and never leaving
// cgroupRoot (the writes must stay in the pods cgroup the chart mounts writable).
func (v *validator) reclaim(r *Reclaim) {
	p := *r.PodsCgroup
	if !*r.Enabled && p == "" {
		return
	}
	clean := path.Clean(p)
	v.check(p != "" && !path.IsAbs(p) && clean != "." && clean != ".." && !strings.HasPrefix(clean, "../"),
		"reclaim.podsCgroup", p, "must be the pods cgroup relative to cgroupRoot, e.g. memory/kubepods.slice (v1) or kubepods.slice (v2)")
}
