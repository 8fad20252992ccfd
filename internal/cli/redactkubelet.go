package cli

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// redactedKubeletFields are the KubeletConfiguration fields a redacted snapshot drops: they can hold
// credentials (staticPodURLHeader: HTTP headers such as Authorization sent with staticPodURL; a URL
// with user information or a token in its query; the tracing collector's endpoint) and the decision
// reads none of them.
var redactedKubeletFields = []string{"staticPodURL", "staticPodURLHeader", "tracing"}

// keptVolume reports whether a pod volume's kind is one the decision reads by name: local storage
// (emptyDir, configMap, gitRepo) and hostPath.
func keptVolume(v corev1.Volume) bool {
	return v.EmptyDir != nil || v.HostPath != nil || v.GitRepo != nil || v.ConfigMap != nil //nolint:staticcheck // gitRepo is still counted by the kubelet
}

// redactKubelet rewrites summary.json and kubelet-config.json: the Summary keeps per pod only the
// volume stats of the volumes the redacted pods keep by name, without PersistentVolumeClaim references
// (claim names); the kubelet configuration loses redactedKubeletFields. s.Pods must be redacted
// already.
func (s *Snapshot) redactKubelet() error {
	if s.Raw[FileSummary] != nil {
		kept := map[string]map[string]bool{} // pod namespace/name -> volume names
		for i := range s.Pods.Items {
			p := &s.Pods.Items[i]
			names := map[string]bool{}
			for _, v := range p.Spec.Volumes {
				if keptVolume(v) {
					names[v.Name] = true
				}
			}
			kept[p.Namespace+"/"+p.Name] = names
		}
		for i := range s.Summary.Pods {
			ps := &s.Summary.Pods[i]
			names := kept[ps.PodRef.Namespace+"/"+ps.PodRef.Name]
			vols := ps.VolumeStats[:0]
			for _, v := range ps.VolumeStats {
				if names[v.Name] {
					v.PVCRef = nil
					vols = append(vols, v)
				}
			}
			ps.VolumeStats = vols
		}
		b, err := json.MarshalIndent(&s.Summary, "", "  ")
		if err != nil {
			return fmt.Errorf("redact %s: %w", FileSummary, err)
		}
		s.Raw[FileSummary] = b
	}
	raw := s.Raw[FileKubeletConfig]
	if raw == nil {
		return nil
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil { // JSON (the /configz answer) or YAML (a config file)
		return fmt.Errorf("redact %s: %w", FileKubeletConfig, err)
	}
	inner := cfg
	if k, ok := cfg["kubeletconfig"].(map[string]any); ok { // /configz wraps it
		inner = k
	}
	for _, f := range redactedKubeletFields {
		delete(inner, f)
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("redact %s: %w", FileKubeletConfig, err)
	}
	s.Raw[FileKubeletConfig] = b
	return nil
}
