package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// DefaultKubeletTimeout bounds the kubelet's part of a live fetch (Summary API and /configz through
// the apiserver's node proxy, together): a kubelet under pressure may not answer at all, and the
// client's own request timeout is 0 (none) unless --request-timeout says otherwise.
const DefaultKubeletTimeout = 10 * time.Second

// FetchSnapshot gets a node's snapshot from the apiserver: the Node, the pods bound to it, and the
// kubelet's Summary and /configz through the apiserver's node proxy, the kubelet's part bounded by
// DefaultKubeletTimeout. Errors name the endpoint.
func FetchSnapshot(ctx context.Context, cs kubernetes.Interface, node string) (*Snapshot, error) {
	return FetchSnapshotTimeout(ctx, cs, node, DefaultKubeletTimeout)
}

// FetchSnapshotTimeout is FetchSnapshot with the kubelet's part bounded by timeout (0: unbounded).
func FetchSnapshotTimeout(ctx context.Context, cs kubernetes.Interface, node string, timeout time.Duration) (*Snapshot, error) {
	raw, origin, err := fetchNode(ctx, cs, node)
	if err != nil {
		return nil, err
	}
	if err := fetchKubelet(ctx, cs, node, timeout, raw, origin); err != nil {
		return nil, err
	}
	return ParseSnapshot(raw, origin)
}

// FetchLive is what a live explain reads: FetchSnapshotTimeout, except that a kubelet that does not
// answer (in time) is not an error. The report is then built from the Node object alone: its
// capacity and conditions, the pods bound to it without stats, an empty Summary (no signal observed)
// and, when /configz did not answer either, the kubelet's default configuration.
// Snapshot.Unavailable says what is missing and why.
func FetchLive(ctx context.Context, cs kubernetes.Interface, node string, timeout time.Duration) (*Snapshot, error) {
	raw, origin, err := fetchNode(ctx, cs, node)
	if err != nil {
		return nil, err
	}
	kerr := fetchKubelet(ctx, cs, node, timeout, raw, origin)
	if kerr == nil {
		return ParseSnapshot(raw, origin)
	}
	notes := errorLines(kerr)
	if raw[FileSummary] == nil {
		raw[FileSummary], _ = json.Marshal(map[string]any{"node": map[string]string{"nodeName": node}})
		origin[FileSummary] += " (no answer)"
		notes = append(notes, "no stats: no signal is observed, so no threshold is met and no eviction order is "+
			"predicted; shown from the Node object: its capacity, conditions and pods")
	}
	if raw[FileKubeletConfig] == nil {
		raw[FileKubeletConfig] = []byte(`{"kind": "KubeletConfiguration"}`)
		origin[FileKubeletConfig] += " (no answer)"
		notes = append(notes, fmt.Sprintf("kubelet configuration unknown: thresholds and reservations are the "+
			"kubelet %s defaults; the node itself reports allocatable %s", PredictedKubeletMinor, reportedAllocatable(raw)))
	}
	s, err := ParseSnapshot(raw, origin)
	if err != nil {
		return nil, err
	}
	s.Unavailable = notes
	return s, nil
}

// fetchNode gets the Node and the pods bound to it, encoded as the files of a snapshot.
func fetchNode(ctx context.Context, cs kubernetes.Interface, node string) (map[string][]byte, map[string]string, error) {
	raw, origin := map[string][]byte{}, map[string]string{}
	n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("get node %s: %w", node, err)
	}
	n.TypeMeta = metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}
	origin[FileNode] = "GET /api/v1/nodes/" + node
	if raw[FileNode], err = json.MarshalIndent(n, "", "  "); err != nil {
		return nil, nil, fmt.Errorf("encode node %s: %w", node, err)
	}
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return nil, nil, fmt.Errorf("list pods on node %s: %w", node, err)
	}
	pods.TypeMeta = metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}
	origin[FilePods] = "GET /api/v1/pods?fieldSelector=spec.nodeName=" + node
	if raw[FilePods], err = json.MarshalIndent(pods, "", "  "); err != nil {
		return nil, nil, fmt.Errorf("encode pods of node %s: %w", node, err)
	}
	for _, name := range []string{FileSummary, FileKubeletConfig} {
		origin[name] = "GET " + kubeletPath(node, name)
	}
	return raw, origin, nil
}

// kubeletPath is the node proxy path of a kubelet endpoint.
func kubeletPath(node, file string) string {
	ep := map[string]string{FileSummary: "stats/summary", FileKubeletConfig: "configz", fileResourceMetrics: "metrics/resource"}[file]
	return "/api/v1/nodes/" + node + "/proxy/" + ep
}

// fetchKubelet gets the Summary and /configz (or only files, when given) into raw, all within
// timeout (0: none).
func fetchKubelet(ctx context.Context, cs kubernetes.Interface, node string, timeout time.Duration,
	raw map[string][]byte, origin map[string]string, files ...string) error {
	if len(files) == 0 {
		files = []string{FileSummary, FileKubeletConfig}
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var errs []error
	for _, name := range files {
		data, err := cs.CoreV1().RESTClient().Get().AbsPath(kubeletPath(node, name)).DoRaw(ctx)
		if err != nil {
			if ctx.Err() != nil && timeout > 0 {
				err = fmt.Errorf("no answer within %s (--kubelet-timeout): %w", timeout, err)
			}
			errs = append(errs, fmt.Errorf("%s (the kubelet, through the apiserver's node proxy): %w", origin[name], err))
			continue
		}
		raw[name] = data
	}
	return errors.Join(errs...)
}

// reportedAllocatable says the node's status.allocatable of memory and ephemeral-storage, from the
// Node's JSON.
func reportedAllocatable(raw map[string][]byte) string {
	var n corev1.Node
	if json.Unmarshal(raw[FileNode], &n) != nil || len(n.Status.Allocatable) == 0 {
		return "nothing"
	}
	var parts []string
	for _, r := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if q, ok := n.Status.Allocatable[r]; ok {
			parts = append(parts, fmt.Sprintf("%s %s", r, q.String()))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}
