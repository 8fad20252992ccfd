package agent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// kubeletFile loads the node's KubeletConfiguration file again and again, and parses it only when its
// bytes differ from the last load's: the refresher reads it every KubeletConfigRefresh, and decoding the
// YAML was the refresh's whole cost (docs/benchmarks.md, "Agent cost"). The file is still read every
// time, so a change is seen at the next load, and a file that cannot be opened or read is an error
// every time, as without the cache. An unchanged invalid file gives the error its parse gave.
type kubeletFile struct {
	Path string
	buf  bytes.Buffer // this load's bytes
	last []byte       // the bytes last parsed; nil before the first parse
	cfg  threshold.Config
	err  error
	// parses counts the parses (for the tests).
	parses int
}

// Load returns the eviction settings of the file's current content.
func (k *kubeletFile) Load() (threshold.Config, error) {
	f, err := os.Open(k.Path)
	if err != nil {
		return threshold.Config{}, fmt.Errorf("kubelet config: %w", err)
	}
	defer f.Close()
	k.buf.Reset()
	if _, err := k.buf.ReadFrom(io.LimitReader(f, kubeconv.MaxKubeletConfigBytes+1)); err != nil {
		return threshold.Config{}, fmt.Errorf("read kubelet config %s: %w", k.Path, err) // LoadKubeletConfig's words
	}
	if k.last != nil && bytes.Equal(k.buf.Bytes(), k.last) {
		return k.cfg, k.err
	}
	k.last = append(k.last[:0], k.buf.Bytes()...)
	k.cfg, k.err = k.parse()
	return k.cfg, k.err
}

func (k *kubeletFile) parse() (threshold.Config, error) {
	k.parses++
	kc, err := kubeconv.LoadKubeletConfig(bytes.NewReader(k.last), k.Path)
	if err != nil {
		return threshold.Config{}, err
	}
	return parseKubelet(kc, k.Path)
}

// fetchConfigz reads the kubelet's effective configuration through the API server's node proxy. The
// answer is streamed into the parser, which stops after kubeconv.MaxKubeletConfigBytes: the proxy
// passes on whatever the kubelet sends, and the agent never holds more than 1 MiB of it (client-go's
// DoRaw would read all of it first). An error answer is still read whole by client-go to build the
// error (Stream's non-2xx path).
func fetchConfigz(ctx context.Context, client kubernetes.Interface, node string) (threshold.Config, error) {
	name := "/api/v1/nodes/" + node + "/proxy/configz"
	body, err := client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", "configz").Stream(ctx)
	if err != nil {
		return threshold.Config{}, fmt.Errorf("kubelet config: get %s: %w", name, err)
	}
	defer body.Close()
	kc, err := kubeconv.LoadKubeletConfig(body, name)
	if err != nil {
		return threshold.Config{}, err
	}
	return parseKubelet(kc, name)
}

// kubeletDefaults is the eviction configuration of a kubelet configured with nothing (its defaults).
func kubeletDefaults() (threshold.Config, error) {
	const empty = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	kc, err := kubeconv.LoadKubeletConfig(strings.NewReader(empty), "the kubelet's defaults")
	if err != nil {
		return threshold.Config{}, err
	}
	return parseKubelet(kc, "the kubelet's defaults")
}

func parseKubelet(kc kubeconv.KubeletConfig, name string) (threshold.Config, error) {
	cfg, err := threshold.ParseConfig(kc.ThresholdInput())
	if err != nil {
		return threshold.Config{}, fmt.Errorf("kubelet config %s: %w", name, err)
	}
	return cfg, nil
}

// kubeletRefresher reads the kubelet's configuration again every Every and hands each changed one to
// the loop. The kubelet re-reads its file only when restarted, but a restart with new eviction settings
// (or a dynamic /configz) must not leave the agent on the old thresholds until it restarts too.
type kubeletRefresher struct {
	// Source names where the configuration comes from (the file, or /configz), for the log.
	Source string
	Load   func(ctx context.Context) (threshold.Config, error)
	Every  time.Duration
	Clock  clock.WithTicker
	Log    *slog.Logger
	// OnErr counts a failed read.
	OnErr func()
	// Updates receives each configuration that differs from the last one handed over.
	Updates chan threshold.Config
	// Pending: the loop runs on the kubelet's defaults until the first read succeeds, retried with
	// Backoff.
	Pending bool
	Backoff backoff
}

// initialKubelet is the kubelet configuration the loop starts with: the file's (read by
// RunWithOptions), else /configz's, else, when /configz does not answer (the API server is down), the
// kubelet's defaults, and true: the refresher then reads /configz until it answers.
func (r *runner) initialKubelet(ctx context.Context, file *threshold.Config) (threshold.Config, bool) {
	if file != nil {
		return *file, false
	}
	kc, err := fetchConfigz(ctx, r.client, r.cfg.Settings.Node)
	if err == nil {
		return kc, false
	}
	def, derr := kubeletDefaults()
	if derr != nil { // the built-in empty KubeletConfiguration parses (TestKubeletDefaults)
		r.log.Error("kubelet config: the kubelet's defaults", "err", derr)
	}
	r.log.Warn("kubelet config: /configz did not answer; using the kubelet's default eviction thresholds until it does",
		"node", r.cfg.Settings.Node, "err", err, "thresholds", thresholdStrings(def))
	return def, true
}

// kubeletRefresher returns the refresher of the kubelet configuration, or nil when it is read only at
// start.
func (r *runner) kubeletRefresher(fromAPI, pending bool) *kubeletRefresher {
	if r.cfg.KubeletConfigRefresh <= 0 && !pending {
		return nil
	}
	k := &kubeletRefresher{Every: r.cfg.KubeletConfigRefresh, Clock: r.opts.Clock, Log: r.log, Updates: make(chan threshold.Config),
		OnErr:   func() { r.metrics.errors.WithLabelValues(stageKubelet).Inc() },
		Pending: pending, Backoff: backoff{Min: r.cfg.Settings.APIBackoffMin, Max: r.cfg.Settings.APIBackoffMax}}
	if fromAPI {
		node := r.cfg.Settings.Node
		k.Source = "/api/v1/nodes/" + node + "/proxy/configz"
		k.Load = func(ctx context.Context) (threshold.Config, error) { return fetchConfigz(ctx, r.client, node) }
	} else {
		file := r.kubeletFile
		if file == nil {
			file = &kubeletFile{Path: r.cfg.KubeletConfigFile}
		}
		k.Source = file.Path
		k.Load = func(context.Context) (threshold.Config, error) { return file.Load() }
	}
	return k
}

// run refreshes from last until ctx is done. A read that fails is logged once per run of failures and
// the last good configuration stays in force. While Pending (the agent started on the kubelet's
// defaults because /configz did not answer), it reads with Backoff until the first success, then every
// Every (0: it stops there).
func (k *kubeletRefresher) run(ctx context.Context, last threshold.Config) {
	pending, failing := k.Pending, false
	b := k.Backoff
	for {
		d := k.Every
		if pending {
			d = b.fail()
		}
		if d <= 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-k.Clock.After(d):
		}
		kc, err := k.Load(ctx)
		if err != nil {
			if !failing && !pending {
				k.Log.Warn("kubelet config unreadable: keeping the last one", "source", k.Source, "err", err)
			}
			failing = true
			k.OnErr()
			continue
		}
		if failing && !pending {
			k.Log.Info("kubelet config readable again", "source", k.Source)
		}
		failing = false
		if equality.Semantic.DeepEqual(kc, last) && !pending {
			continue
		}
		msg := "kubelet config changed: the next sync uses it"
		if pending {
			msg = "kubelet config read: the next sync uses it instead of the kubelet's defaults"
		}
		k.Log.Info(msg, "source", k.Source, "thresholds_before", thresholdStrings(last), "thresholds", thresholdStrings(kc))
		select {
		case k.Updates <- kc:
			last, pending = kc, false
		case <-ctx.Done():
			return
		}
	}
}

func thresholdStrings(c threshold.Config) []string {
	out := make([]string, 0, len(c.Thresholds))
	for _, t := range c.Thresholds {
		out = append(out, t.String())
	}
	return out
}
