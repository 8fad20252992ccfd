package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/kube-pressure/pressure/internal/decision"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/kube-pressure/pressure/internal/threshold"
)

// PredictedKubeletMinor is the kubelet minor version whose configuration defaults explain applies.
const PredictedKubeletMinor = "v1.37"

// KubeletSemantics resolves the eviction semantics of the snapshot's node: override (the
// --kubelet-version flag) or else the Node's status.nodeInfo.kubeletVersion, with the feature gates of
// the kubelet configuration (/configz). An unknown or unsupported version carries a warning naming
// where the version came from.
func KubeletSemantics(s *Snapshot, override string) decision.Semantics {
	v, from := override, "--kubelet-version"
	if v == "" {
		v, from = s.Node.Status.NodeInfo.KubeletVersion, s.Origin[FileNode]+": status.nodeInfo.kubeletVersion"
	}
	sem := s.KubeletConfig.Semantics(v)
	if sem.Warning != "" {
		sem.Warning = from + ": " + sem.Warning
	}
	return sem
}

// capacity converts the node's status.capacity into the allocatable math's units: cpu in
// millicores, memory, ephemeral-storage and hugepages-* in bytes. A quantity that is negative or
// does not fit an int64 in that unit is an error naming the field and the value as written in raw
// (the node's JSON): resource.Quantity clamps such values to 2^63−1, or Value() wraps them.
func capacity(file string, rl corev1.ResourceList, raw []byte) (map[string]int64, error) {
	out := map[string]int64{}
	names := make([]string, 0, len(rl))
	for name := range rl {
		names = append(names, string(name))
	}
	sort.Strings(names)
	for _, n := range names {
		q := rl[corev1.ResourceName(n)]
		milli := n == threshold.ResourceCPU
		if !milli && n != threshold.ResourceMemory && n != threshold.ResourceEphemeralStorage &&
			!strings.HasPrefix(n, corev1.ResourceHugePagesPrefix) {
			continue
		}
		limit := resource.NewQuantity(math.MaxInt64, resource.BinarySI)
		if milli {
			limit = resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)
		}
		if q.Sign() < 0 || q.Cmp(*limit) >= 0 {
			return nil, &FileError{File: file, Field: "status.capacity." + n,
				Err: fmt.Errorf("%s is out of range: want 0 to less than %s", written(raw, n, q), limit.String())}
		}
		if milli {
			out[n] = q.MilliValue()
		} else {
			out[n] = q.Value()
		}
	}
	return out, nil
}

// hugeNumbers returns a warning for every number in the JSON data above the int64 range: the
// kubelet converts the Summary's unsigned counters to int64, so 2^64−1 available bytes read as −1.
func hugeNumbers(file string, data []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var root any
	if dec.Decode(&root) != nil {
		return nil
	}
	var out []string
	walkNumbers(root, "", func(path string, n json.Number) {
		u, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil || u <= math.MaxInt64 {
			return
		}
		out = append(out, fmt.Sprintf("%s: field %s: %s does not fit an int64: the kubelet reads it as %d",
			file, path, n, int64(u)))
	})
	return out
}

// quantityMaps are the JSON keys whose object maps resource or signal names to quantities: a pod's
// requests, limits and overhead, the kubelet's reservations and eviction thresholds.
var quantityMaps = map[string]bool{"requests": true, "limits": true, "overhead": true, "kubeReserved": true,
	"systemReserved": true, "evictionHard": true, "evictionSoft": true, "evictionMinimumReclaim": true}

// hugeQuantities returns a warning for every quantity in the JSON or YAML data (under quantityMaps
// keys) beyond the int64 range in its unit (millicores for cpu), naming the field and the value as
// written: it is counted as the largest int64 (threshold.Amount), where Quantity.Value would read 1e30
// as 0. Percentages and values that do not parse are left to the readers.
func hugeQuantities(file string, data []byte) []string {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil
	}
	var root any
	if json.Unmarshal(js, &root) != nil {
		return nil
	}
	var out []string
	check := func(path, name, written string) {
		q, err := threshold.ParseQuantity(written)
		milli := name == threshold.ResourceCPU
		if err != nil || threshold.Amount(q, milli) != math.MaxInt64 {
			return
		}
		unit := ""
		if milli {
			unit = " (in millicores)"
		}
		out = append(out, fmt.Sprintf("%s: field %s: %s does not fit an int64%s: counted as %d, above any capacity",
			file, path, written, unit, int64(math.MaxInt64)))
	}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(t) {
				if m, ok := t[k].(map[string]any); ok && quantityMaps[k] {
					for _, name := range sortedKeys(m) {
						if written, ok := m[name].(string); ok {
							check(join(join(path, k), name), name, written)
						}
					}
					continue
				}
				walk(t[k], join(path, k))
			}
		case []any:
			for i, e := range t {
				walk(e, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(root, "")
	return out
}

func walkNumbers(v any, path string, f func(string, json.Number)) {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			walkNumbers(t[k], join(path, k), f)
		}
	case []any:
		for i, e := range t {
			walkNumbers(e, fmt.Sprintf("%s[%d]", path, i), f)
		}
	case json.Number:
		f(path, t)
	}
}

// duplicateStats warns about two pod stats with one UID in the Summary: the kubelet keeps the later.
func duplicateStats(s *Snapshot) []string {
	var out []string
	seen := map[string]int{}
	for i, p := range s.Summary.Pods {
		uid := p.PodRef.UID
		if j, ok := seen[uid]; ok && uid != "" {
			out = append(out, fmt.Sprintf("%s: field pods[%d].podRef.uid: %q is also the uid of pods[%d]: the "+
				"kubelet keeps the later stats (pods[%d])", s.Origin[FileSummary], i, uid, j, i))
		}
		seen[uid] = i
	}
	return out
}

// written returns the capacity quantity of resource n as the node's JSON writes it.
func written(raw []byte, n string, q resource.Quantity) string {
	var node struct {
		Status struct {
			Capacity map[string]json.RawMessage `json:"capacity"`
		} `json:"status"`
	}
	if json.Unmarshal(raw, &node) == nil {
		if v, ok := node.Status.Capacity[n]; ok {
			return strings.Trim(string(v), `"`)
		}
	}
	return q.String()
}

// errorLines splits a joined error into one warning per line, sorted (the readers' errors come
// from map iteration).
func errorLines(err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}
