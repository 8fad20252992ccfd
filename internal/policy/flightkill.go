package policy

import (
	"fmt"
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/threshold"
)

// flightKills plans the SIGKILL on the node of the pods in flight whose growth makes v's fall, while the
// rung holds further evictions off for them (growth.dying), when that fall takes the working set to the
// kubelet's own threshold within KillLead: the kubelet would then evict by its own ranking before their
// eviction completes. The kill is otherwise decided with the eviction only (kubeletKill), on the growth
// seen then, and a hog seen 11Mi into its growth reads 7.2Mi/s over the rate span where it grows
// 256Mi/s: on the real node the agent evicted it without the kill and the kubelet evicted the reader
// beside it (make test's looping-reader case, 2026-12-07). The rate here is the larger of the pod's
// growth and the working set's fall since the last step. At most one kill per flight (flight.killing).
func (st *State) flightKills(now time.Time, v ReclaimView, pods []Pod, cfg Config, p *Plan) {
	if cfg.KillLead <= 0 || cfg.DryRun || !v.KubeletKnown || v.WorkingSet <= v.Kubelet {
		return
	}
	fall := st.wsFall(v.Signal)
	byUID := make(map[string]Pod, len(pods))
	for _, q := range pods {
		byUID[q.Candidate.UID] = q
	}
	uids := make([]string, 0, len(st.flights))
	for uid := range st.flights {
		uids = append(uids, uid)
	}
	sort.Strings(uids)
	for _, uid := range uids {
		f := st.flights[uid]
		q, listed := byUID[uid]
		grows := st.podGrowth(uid, cfg.Reclaim)
		if !listed || f.killing || !f.explainsGrowth(now, cfg) || grows <= 0 {
			continue
		}
		rate := max(grows, fall)
		eta := time.Duration(float64(v.WorkingSet-v.Kubelet) / rate * float64(time.Second))
		if eta > cfg.KillLead {
			continue
		}
		k := Kill{Pod: candidateRef(q.Candidate), Signal: v.Signal, ETA: eta}
		p.Kills = append(p.Kills, k)
		f.killing = true
		st.flights[uid] = f
		p.tr().add(KindKill, k.Pod.String(), fmt.Sprintf("in flight and growing %s/s (the working set falls %s/s): the working set %s "+
			"reaches the kubelet's threshold %s in %s, within the kill lead %s: SIGKILL on the node (the kubelet would evict by its "+
			"own ranking before the eviction completes)", threshold.FormatHuman(int64(grows), true), threshold.FormatHuman(int64(fall), true),
			threshold.FormatAvailable(v.WorkingSet, v.Signal), threshold.FormatAvailable(v.Kubelet, v.Signal), eta.Round(time.Millisecond), cfg.KillLead))
	}
}
