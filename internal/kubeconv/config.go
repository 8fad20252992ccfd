package kubeconv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/kube-pressure/pressure/internal/threshold"
)

// configzKey is the key under which the kubelet's /configz endpoint wraps its configuration.
const configzKey = "kubeletconfig"

// KubeletConfig is a loaded KubeletConfiguration and where it came from.
type KubeletConfig struct {
	Config *kubeletconfigv1beta1.KubeletConfiguration
	// Warnings are the strict-decoding failures (unknown or duplicate fields) the kubelet would log
	// before falling back to lenient decoding, each naming the file.
	Warnings []string
	// Effective is true for /configz output: the kubelet already applied its defaults and merged
	// evictionHard, and fields left empty were serialized away (omitempty). An absent evictionHard
	// then means "no hard thresholds" and a "0s" transition period means 0.
	Effective bool
}

// MaxKubeletConfigBytes bounds what LoadKubeletConfig reads (1 MiB, like the agent's and janitor's
// own configuration loaders): a real KubeletConfiguration is a few KiB, and the agent must not be made
// to buffer an arbitrary file or response.
const MaxKubeletConfigBytes = 1 << 20

// ErrKubeletConfigTooLarge is wrapped by LoadKubeletConfig's error for more than MaxKubeletConfigBytes.
var ErrKubeletConfigTooLarge = errors.New("kubelet config too large")

// LoadKubeletConfig reads a KubeletConfiguration in JSON or YAML from r. name (a file name or
// URL) is used in errors only. More than MaxKubeletConfigBytes is an error. Both a bare
// KubeletConfiguration and the /configz wrapper {"kubeletconfig": {...}} are accepted. Unknown and
// duplicate fields are ignored, as the kubelet's lenient decoder does after its strict decoding
// failed, and reported in Warnings (the kubelet logs them); a wrong apiVersion or kind is an error.
func LoadKubeletConfig(r io.Reader, name string) (KubeletConfig, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxKubeletConfigBytes+1))
	if err != nil {
		return KubeletConfig{}, fmt.Errorf("read kubelet config %s: %w", name, err)
	}
	if len(data) > MaxKubeletConfigBytes {
		return KubeletConfig{}, fmt.Errorf("kubelet config %s: larger than %d bytes: %w", name, MaxKubeletConfigBytes, ErrKubeletConfigTooLarge)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		if jerr := jsonError(data); jerr != nil { // it looks like JSON: say what is wrong as JSON
			return KubeletConfig{}, fmt.Errorf("kubelet config %s: not valid JSON: %w", name, jerr)
		}
		return KubeletConfig{}, fmt.Errorf("kubelet config %s: not JSON or YAML: %w", name, err)
	}
	var warnings []string
	if _, err := yaml.YAMLToJSONStrict(data); err != nil { // duplicate keys: the lenient conversion keeps the last
		warnings = append(warnings, strictWarning(name, err))
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(js, &top); err != nil {
		return KubeletConfig{}, fmt.Errorf("kubelet config %s: not an object: %w", name, err)
	}
	out := KubeletConfig{Config: &kubeletconfigv1beta1.KubeletConfiguration{}, Warnings: warnings}
	if inner, ok := top[configzKey]; ok && len(top) == 1 {
		js, out.Effective = inner, true
	}
	if err := checkKind(js, name); err != nil {
		return KubeletConfig{}, err
	}
	// Case-sensitive field names, like the kubelet's decoder; strict errors do not change the result.
	strict, err := kjson.UnmarshalStrict(js, out.Config)
	if err != nil {
		return KubeletConfig{}, fmt.Errorf("kubelet config %s: %w", name, err)
	}
	for _, e := range strict {
		out.Warnings = append(out.Warnings, strictWarning(name, e))
	}
	return out, nil
}

// jsonError returns the JSON syntax error of data, with its line and column, when data looks like
// JSON (its first non-space byte is '{'); nil otherwise.
func jsonError(data []byte) error {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil
	}
	var v any
	err := json.Unmarshal(data, &v)
	var syn *json.SyntaxError
	if !errors.As(err, &syn) {
		return err
	}
	before := data[:min(int(syn.Offset), len(data))]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

func strictWarning(name string, err error) string {
	return fmt.Sprintf("kubelet config %s: %v: ignored (the kubelet's strict decoding fails on it; it then "+
		"decodes leniently and logs the error)", name, strings.Join(strings.Fields(err.Error()), " "))
}

func checkKind(js []byte, name string) error {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(js, &tm); err != nil {
		return fmt.Errorf("kubelet config %s: %w", name, err)
	}
	if tm.Kind != "" && tm.Kind != "KubeletConfiguration" {
		return fmt.Errorf("kubelet config %s: kind %q is not KubeletConfiguration", name, tm.Kind)
	}
	if tm.APIVersion != "" && tm.APIVersion != kubeletconfigv1beta1.SchemeGroupVersion.String() {
		return fmt.Errorf("kubelet config %s: apiVersion %q is not %s", name, tm.APIVersion,
			kubeletconfigv1beta1.SchemeGroupVersion.String())
	}
	return nil
}

// LocalStorageCapacityIsolation is the kubelet's localStorageCapacityIsolation: true unless the
// configuration sets it to false (the v1beta1 default is true, and /configz always serializes it).
func (k KubeletConfig) LocalStorageCapacityIsolation() bool {
	return k.Config == nil || k.Config.LocalStorageCapacityIsolation == nil || *k.Config.LocalStorageCapacityIsolation
}

// ThresholdInput returns the eviction settings of the loaded configuration, with file or
// /configz semantics according to k.Effective.
func (k KubeletConfig) ThresholdInput() threshold.Input {
	if k.Effective {
		return EffectiveThresholdInput(k.Config)
	}
	return ThresholdInput(k.Config)
}

// ThresholdInput returns the eviction settings of a KubeletConfiguration as read from a kubelet
// config file: a nil evictionHard gets the defaults, an evictionPressureTransitionPeriod of 0 is
// unset (5m), a nil enforceNodeAllocatable is ["pods"]. The --experimental-allocatable-ignore-eviction
// flag is not part of the file; set it on the result when needed.
func ThresholdInput(kc *kubeletconfigv1beta1.KubeletConfiguration) threshold.Input {
	in := threshold.Input{
		EvictionHard:                 kc.EvictionHard,
		EvictionHardSet:              kc.EvictionHard != nil,
		MergeDefaultEvictionSettings: kc.MergeDefaultEvictionSettings != nil && *kc.MergeDefaultEvictionSettings,
		EvictionSoft:                 kc.EvictionSoft,
		EvictionSoftGracePeriod:      kc.EvictionSoftGracePeriod,
		EvictionMinimumReclaim:       kc.EvictionMinimumReclaim,
		EvictionMaxPodGracePeriod:    kc.EvictionMaxPodGracePeriod,
		EnforceNodeAllocatable:       kc.EnforceNodeAllocatable,
		EnforceNodeAllocatableSet:    kc.EnforceNodeAllocatable != nil,
		KubeReserved:                 kc.KubeReserved,
		SystemReserved:               kc.SystemReserved,
		KernelMemcgNotification:      kc.KernelMemcgNotification,
		ImageGCHighThresholdPercent:  kc.ImageGCHighThresholdPercent,
	}
	if d := kc.EvictionPressureTransitionPeriod.Duration; d != 0 {
		in.EvictionPressureTransitionPeriod = &d
	}
	return in
}

// EffectiveThresholdInput returns the eviction settings of a KubeletConfiguration served by
// /configz, which is already defaulted and merged: every field is taken literally, absent meaning
// empty.
func EffectiveThresholdInput(kc *kubeletconfigv1beta1.KubeletConfiguration) threshold.Input {
	in := ThresholdInput(kc)
	in.EvictionHardSet = true
	in.MergeDefaultEvictionSettings = false
	in.EnforceNodeAllocatableSet = true
	d := kc.EvictionPressureTransitionPeriod.Duration
	in.EvictionPressureTransitionPeriod = &d
	return in
}
