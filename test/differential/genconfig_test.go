package differential

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
)

func (g *gen) genConfig(fam family) (cfgInfo, map[string]any) {
	info := cfgInfo{hard: map[string]string{}, soft: map[string]string{}, reclaim: map[string]string{}}
	kc := map[string]any{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}
	if g.chance(0.9) {
		info.hard["memory.available"] = g.pick("100Mi", "200Mi", "500Mi", "1Gi", "1.5Gi", "5%", "10%", "7.5%",
			fmt.Sprint(100000000+g.r.Int63n(1<<29)))
	}
	if g.chance(0.7) {
		info.hard["nodefs.available"] = g.pick("10%", "5%", "2Gi", "15%", "12.5%")
	}
	if g.chance(0.5) {
		info.hard["nodefs.inodesFree"] = g.pick("5%", "10%", "100k")
	}
	if g.chance(0.5) {
		info.hard["imagefs.available"] = g.pick("15%", "10%", "5Gi")
	}
	if g.chance(0.4) {
		info.hard["imagefs.inodesFree"] = g.pick("5%", "200000")
	}
	if g.chance(0.1) {
		info.hard["containerfs.available"] = g.pick("1%", "20%")
	}
	if g.chance(0.5) || fam == famPID {
		info.hard["pid.available"] = g.pick("5%", "10%", "1000", "500")
	}
	if g.chance(0.4) {
		grace := map[string]string{}
		for _, sig := range softSignals(fam) {
			if g.chance(0.6) {
				info.soft[sig] = softValue(g, sig)
				grace[sig] = g.pick("0s", "30s", "1m", "90s", "2m", "10s")
			}
		}
		if len(info.soft) > 0 {
			kc["evictionSoft"] = info.soft
			kc["evictionSoftGracePeriod"] = grace
		}
	}
	if g.chance(0.3) {
		for _, sig := range []string{"memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available", "pid.available"} {
			if g.chance(0.5) {
				info.reclaim[sig] = reclaimValue(g, sig)
			}
		}
		if len(info.reclaim) > 0 {
			kc["evictionMinimumReclaim"] = info.reclaim
		}
	}
	switch {
	case g.chance(0.05): // no evictionHard at all: the kubelet's defaults
		info.hard = map[string]string{"memory.available": "100Mi", "nodefs.available": "10%",
			"nodefs.inodesFree": "5%", "imagefs.available": "15%", "imagefs.inodesFree": "5%"}
	case g.chance(0.08):
		kc["evictionHard"] = info.hard
		kc["mergeDefaultEvictionSettings"] = true
		for k, v := range map[string]string{"memory.available": "100Mi", "nodefs.available": "10%",
			"nodefs.inodesFree": "5%", "imagefs.available": "15%", "imagefs.inodesFree": "5%"} {
			if _, ok := info.hard[k]; !ok {
				info.hard[k] = v
			}
		}
	default:
		kc["evictionHard"] = info.hard
	}
	if p := g.pick("", "", "0s", "30s", "1m", "5m", "20s"); p != "" {
		kc["evictionPressureTransitionPeriod"] = p
	}
	if m := []int{0, 0, 30, 60, -1, 10}[g.r.Intn(6)]; m != 0 {
		kc["evictionMaxPodGracePeriod"] = m
	}
	switch g.r.Intn(3) {
	case 0:
		kc["enforceNodeAllocatable"] = []string{}
	case 1:
		kc["enforceNodeAllocatable"] = []string{"pods"}
	}
	if g.chance(0.1) {
		kc["localStorageCapacityIsolation"] = false
	}
	if g.chance(0.03) { // invalid settings: both sides must refuse
		if m, ok := kc["evictionHard"].(map[string]string); ok {
			m[g.pick("memory.available", "memory.free", "nodefs.available")] = g.pick("150%", "0", "-1Gi", "x")
		} else {
			kc["evictionSoft"] = map[string]string{"memory.available": "1Gi"}
			delete(kc, "evictionSoftGracePeriod")
		}
	}
	return info, kc
}

func softSignals(fam family) []string {
	switch fam {
	case famDisk:
		return []string{"nodefs.available", "imagefs.available", "nodefs.inodesFree", "memory.available"}
	case famPID:
		return []string{"pid.available", "memory.available"}
	}
	return []string{"memory.available", "nodefs.available"}
}

func softValue(g *gen, sig string) string {
	switch sig {
	case "memory.available":
		return g.pick("1Gi", "1.5Gi", "15%", "300Mi")
	case "pid.available":
		return g.pick("10%", "2000")
	case "nodefs.inodesFree":
		return g.pick("10%", "300k")
	}
	return g.pick("20%", "15%", "10Gi")
}

func reclaimValue(g *gen, sig string) string {
	switch sig {
	case "pid.available":
		return g.pick("100", "1%")
	case "nodefs.inodesFree":
		return g.pick("100k", "1%", "0")
	}
	return g.pick("0Mi", "100Mi", "500Mi", "5%", "1%", "1Gi")
}

// resolve returns the amount a threshold or min-reclaim value stands for against capacity, with the
// kubelet's float32 percentage (only used to aim at boundaries; the oracle judges).
func resolve(v string, capacity int64) (int64, bool) {
	if v == "" {
		return 0, false
	}
	if v[len(v)-1] == '%' {
		var f float64
		if _, err := fmt.Sscanf(v[:len(v)-1], "%g", &f); err != nil {
			return 0, false
		}
		return int64(float64(capacity) * float64(float32(f/100))), true
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return 0, false
	}
	return q.Value(), true
}
