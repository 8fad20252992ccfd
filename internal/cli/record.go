package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
)

// StampLayout names a recording's snapshot directories: UTC, millisecond, sortable, no colons.
const StampLayout = "20060102T150405.000Z"

// FileRecording describes a recording: its node, interval, start and stop.
const FileRecording = "recording.json"

// RecordingInfo is the content of FileRecording.
type RecordingInfo struct {
	Node        string    `json:"node"`
	Every       string    `json:"every"`
	Started     time.Time `json:"started"`
	Stopped     time.Time `json:"stopped,omitzero"`
	Snapshots   int       `json:"snapshots"`
	Failures    int       `json:"failures"`
	Interrupted bool      `json:"interrupted,omitempty"`
	Redacted    bool      `json:"redacted"`
	// LocalEvery is the interval of the local reads of the node's cgroups (--local), "" without.
	LocalEvery string `json:"localEvery,omitempty"`
}

// RecordingResult is what `kubectl pressure record -o json|yaml` prints at the end: the recording's
// description (as in recording.json) and its directory.
type RecordingResult struct {
	RecordingInfo
	Dir string `json:"dir"`
}

// recordOptions are the flags of `kubectl pressure record`.
type recordOptions struct {
	out      string
	output   string
	every    time.Duration
	duration time.Duration
	timeout  time.Duration
	noRedact bool
	local    localView
	// localEvery is the interval of the local reads (0: every).
	localEvery time.Duration
	// sampler and buf take the local reads while recording (nil without --local).
	sampler *cgroupSampler
	buf     *sampleBuffer
}

func newRecordCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := recordOptions{every: time.Second, duration: 10 * time.Minute}
	cmd := &cobra.Command{
		Use:   "record NODE --out DIR [--every 1s] [--for 10m]",
		Short: "Record a node's snapshots over time, for kubectl pressure simulate",
		Long: `Record takes a snapshot of NODE every --every for --for (the same files "kubectl pressure snapshot"
writes, redacted the same way) into DIR/<UTC time>/, and describes the recording in DIR/recording.json.
Progress goes to stderr. Ctrl-C stops the recording cleanly and keeps what was recorded; a snapshot the
kubelet does not answer in time (--kubelet-timeout) is skipped, counted and reported. Replay the
recording with "kubectl pressure simulate DIR".

With --local, run on NODE itself as root, the node's cgroups are also read as pressure-agent reads them
(its memory signals, the pods cgroup and every pod's cgroup) every --local-every, and each snapshot's
cgroups.json holds the reads taken since the previous one: a ramp faster than the kubelet's Summary
(cAdvisor measures pods about every 10s) is in the recording, and simulate's pressure-agent run reads it.`,
		Example:           `  kubectl pressure record node-1 --every 1s --for 10m --out ./node-1-rec`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeNodes(flags),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := o.check()
			if err == nil {
				cs, err = clientset(flags)
			}
			if err != nil {
				return err
			}
			return o.record(cmd.Context(), cs, streams, args[0])
		},
	}
	addKubeletTimeout(cmd, &o.timeout)
	addOutputFlag(cmd, &o.output, "the same as text; text says the progress and the end on stderr and nothing on stdout, "+
		"the other formats print the recording's description at the end")
	cmd.Flags().StringVar(&o.out, "out", "", "new directory to write the recording into (created 0700; files 0600)")
	cmd.Flags().DurationVar(&o.every, "every", o.every, "interval between two snapshots (at least 100ms)")
	cmd.Flags().DurationVar(&o.duration, "for", o.duration, "how long to record")
	cmd.Flags().BoolVar(&o.noRedact, "no-redact", false, "keep the node and pods as the apiserver serves them")
	o.local.addFlags(cmd.Flags())
	cmd.Flags().DurationVar(&o.localEvery, "local-every", 0, "with --local: interval between two local reads of the cgroups "+
		"(at least 10ms; default: --every)")
	return cmd
}

// check validates the flags; the returned clientset is always nil.
func (o recordOptions) check() (kubernetes.Interface, error) {
	if err := checkOutput(o.output); err != nil {
		return nil, err
	}
	switch {
	case o.out == "":
		return nil, errors.New("--out DIR is required")
	case o.every < 100*time.Millisecond:
		return nil, fmt.Errorf("--every %s: at least 100ms", o.every)
	case o.duration <= 0:
		return nil, fmt.Errorf("--for %s: must be positive", o.duration)
	case o.localEvery != 0 && !o.local.enabled:
		return nil, fmt.Errorf("--local-every %s: only with --local", o.localEvery)
	case o.localEvery != 0 && o.localEvery < 10*time.Millisecond:
		return nil, fmt.Errorf("--local-every %s: at least 10ms", o.localEvery)
	}
	if entries, err := os.ReadDir(o.out); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("--out %s: not empty: a recording goes into a new directory", o.out)
	}
	return nil, nil
}

// record runs the recording until --for has passed or ctx is cancelled (Ctrl-C), which is not an
// error: what was recorded is kept.
func (o recordOptions) record(ctx context.Context, cs kubernetes.Interface, streams genericiooptions.IOStreams, node string) error {
	progress := streams.ErrOut
	rec := RecordingInfo{Node: node, Every: o.every.String(), Started: time.Now().UTC(), Redacted: !o.noRedact}
	sampler, err := o.local.sampler()
	if err != nil {
		return err
	}
	if sampler != nil {
		if o.localEvery == 0 {
			o.localEvery = o.every
		}
		o.sampler, o.buf, rec.LocalEvery = sampler, &sampleBuffer{}, o.localEvery.String()
		o.buf.add(sampler.sample(rec.Started))
		stop := make(chan struct{})
		defer close(stop)
		go sampleEvery(sampler, o.localEvery, o.buf, stop)
	}
	first, missing, err := o.fetch(ctx, cs, node)
	if err != nil {
		return fmt.Errorf("first snapshot: %w", err) // nothing written
	}
	warned := o.warnStatsTimes(progress, node, missing, false)
	if err := os.MkdirAll(o.out, 0o700); err != nil {
		return err
	}
	if sampler != nil {
		if why := cgroupMismatch(first.Raw[FileKubeletConfig], sampler.driver()); why != "" {
			fmt.Fprintf(progress, "record %s: --local: warning: %s\n", node, why)
		}
	}
	if err := o.write(first, rec.Started); err != nil {
		return err
	}
	if err := writeInfo(o.out, rec); err != nil {
		return err
	}
	rec.Snapshots++
	tick := time.NewTicker(o.every)
	defer tick.Stop()
	deadline := time.NewTimer(o.duration)
	defer deadline.Stop()
	o.progress(progress, rec, "")
	for {
		select {
		case <-ctx.Done():
			rec.Interrupted = true
			return o.finish(streams, rec)
		case <-deadline.C:
			return o.finish(streams, rec)
		case now := <-tick.C:
			missing, err := o.snapshot(ctx, cs, node, now.UTC())
			warned = o.warnStatsTimes(progress, node, missing, warned)
			switch {
			case err != nil && ctx.Err() != nil:
				continue // interrupted while fetching: nothing half-written
			case err != nil:
				rec.Failures++
				o.progress(progress, rec, err.Error())
			default:
				rec.Snapshots++
				o.progress(progress, rec, "")
			}
		}
	}
}

// snapshot fetches one snapshot and writes it under its time; missing is fetch's.
func (o recordOptions) snapshot(ctx context.Context, cs kubernetes.Interface, node string, at time.Time) (missing error, err error) {
	snap, missing, err := o.fetch(ctx, cs, node)
	if err != nil {
		return nil, err
	}
	return missing, o.write(snap, at)
}

// fetch gets one snapshot of the node, redacted unless --no-redact, with the time of the kubelet's
// node memory stats (FileStatsTimes). A kubelet that does not serve that time is not an error: the
// snapshot is written without it, and missing says why.
func (o recordOptions) fetch(ctx context.Context, cs kubernetes.Interface, node string) (snap *Snapshot, missing error, err error) {
	snap, err = FetchSnapshotTimeout(ctx, cs, node, o.timeout)
	if err != nil {
		return nil, nil, err
	}
	if !o.noRedact {
		if err := snap.Redact(); err != nil {
			return nil, nil, err
		}
	}
	st, missing := fetchStatsTimes(ctx, cs, node, o.timeout)
	if ctx.Err() != nil {
		return nil, nil, ctx.Err() // interrupted: nothing half-written
	}
	if missing == nil {
		if err := snap.SetStatsTimes(*st); err != nil {
			return nil, nil, err
		}
	}
	return snap, missing, nil
}

// warnStatsTimes says once, on progress, that snapshots go without FileStatsTimes; it returns whether
// it has said so.
func (o recordOptions) warnStatsTimes(progress io.Writer, node string, missing error, warned bool) bool {
	if missing == nil || warned {
		return warned
	}
	fmt.Fprintf(progress, "record %s: warning: %v: snapshots without %s go on (simulate then places the kubelet's "+
		"loop from the Summary's whole seconds)\n", node, missing, FileStatsTimes)
	return true
}

// write writes a snapshot under its time, atomically (a temporary directory renamed), so that an
// interruption never leaves half a snapshot.
func (o recordOptions) write(snap *Snapshot, at time.Time) error {
	if o.buf != nil {
		read := CgroupSamples{Layout: o.sampler.layout(), Every: o.localEvery.String(), Samples: o.buf.take()}
		if err := snap.SetCgroups(read); err != nil {
			return err
		}
	}
	name := at.Format(StampLayout)
	tmp := filepath.Join(o.out, ".tmp-"+name)
	if err := snap.WriteDir(tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("write snapshot: %w", err)
	}
	return os.Rename(tmp, filepath.Join(o.out, name))
}

func (o recordOptions) progress(w io.Writer, rec RecordingInfo, failure string) {
	elapsed := time.Since(rec.Started).Round(time.Second)
	if failure != "" {
		fmt.Fprintf(w, "record %s: %s: snapshot skipped (%d so far): %s\n", rec.Node, elapsed, rec.Failures, failure)
		return
	}
	if rec.Snapshots == 1 || rec.Snapshots%10 == 0 {
		fmt.Fprintf(w, "record %s: %d snapshots in %s of %s into %s\n", rec.Node, rec.Snapshots, elapsed, o.duration, o.out)
	}
}

// finish writes recording.json and the closing line (on stderr), and in a machine format the
// RecordingResult on stdout.
func (o recordOptions) finish(streams genericiooptions.IOStreams, rec RecordingInfo) error {
	w := streams.ErrOut
	rec.Stopped = time.Now().UTC()
	if err := writeInfo(o.out, rec); err != nil {
		return err
	}
	how := "done"
	if rec.Interrupted {
		how = "interrupted, kept what was recorded"
	}
	fmt.Fprintf(w, "record %s: %s: %d snapshots (%d skipped) in %s into %s; replay with: kubectl pressure simulate %s\n",
		rec.Node, how, rec.Snapshots, rec.Failures, rec.Stopped.Sub(rec.Started).Round(time.Second), o.out, o.out)
	if isText(o.output) {
		return nil
	}
	return printObject(streams.Out, KindRecording, RecordingResult{RecordingInfo: rec, Dir: o.out}, o.output)
}

// writeInfo writes recording.json (at the start, and again at the end with the counts).
func writeInfo(dir string, rec RecordingInfo) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, FileRecording), append(data, '\n'), 0o600)
}
