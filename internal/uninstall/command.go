package uninstall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"

	"github.com/kube-pressure/pressure/internal/daemon"
	"github.com/kube-pressure/pressure/internal/logging"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
)

// Name is the subcommand of pressure-agent that runs a Cleaner.
const Name = "cleanup"

// Options are the subcommand's flags.
type Options struct {
	Kubeconfig, Namespace, DaemonSet, TaintKey string
	StopTimeout, Poll                          time.Duration
	Logging                                    logging.Flags
}

// AddFlags registers the flags on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "path of a kubeconfig file; empty means in-cluster")
	fs.StringVar(&o.Namespace, "namespace", "", "namespace of the agent DaemonSet (required)")
	fs.StringVar(&o.DaemonSet, "daemonset", "", "name of the agent DaemonSet to stop (required)")
	fs.StringVar(&o.TaintKey, "taint-key", loopbreaker.TaintKey, "the agents' NoSchedule taint (loopBreaker.taintKey)")
	fs.DurationVar(&o.StopTimeout, "agent-stop-timeout", time.Minute,
		"how long to wait for the agent pods to stop (each removes its own taint) before removing the taints that are left")
	fs.DurationVar(&o.Poll, "poll-interval", time.Second, "interval of that wait")
	o.Logging.AddFlags(fs)
}

// validate names the first bad flag.
func (o *Options) validate() error {
	switch {
	case o.Namespace == "":
		return errors.New("flag --namespace: required")
	case o.DaemonSet == "":
		return errors.New("flag --daemonset: required")
	case o.TaintKey == "":
		return errors.New("flag --taint-key: must not be empty")
	case o.StopTimeout <= 0:
		return fmt.Errorf("flag --agent-stop-timeout: value %s: must be positive", o.StopTimeout)
	case o.Poll <= 0:
		return fmt.Errorf("flag --poll-interval: value %s: must be positive", o.Poll)
	}
	return nil
}

// Main parses args (those after the subcommand), runs the cleanup and prints what it did on stdout;
// logs go to stderr. An error means some node may still carry the taint.
func Main(binary string, args []string, stdout, stderr io.Writer) error {
	var o Options
	fs := pflag.NewFlagSet(binary+" "+Name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s %s --namespace NS --daemonset NAME [flags]\n\n"+
			"Stops the agent DaemonSet (its pods remove their own taints on the way out), then removes the\n"+
			"agents' NoSchedule taint from every node that still has it. The chart's pre-delete hook runs it.\n\n", binary, Name)
		fs.PrintDefaults()
	}
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected arguments %s", Name, strings.Join(fs.Args(), " "))
	}
	if err := o.validate(); err != nil {
		return err
	}
	log, err := logging.Setup(stderr, o.Logging)
	if err != nil {
		return err
	}
	rc, err := daemon.RESTConfig(o.Kubeconfig)
	if err != nil {
		return err
	}
	rc.UserAgent = binary + "/" + Name
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := Cleaner{Client: client, Namespace: o.Namespace, DaemonSet: o.DaemonSet, TaintKey: o.TaintKey,
		StopTimeout: o.StopTimeout, Poll: o.Poll, Log: log}.Run(ctx)
	fmt.Fprintln(stdout, r.Summary(o.Namespace+"/"+o.DaemonSet, o.TaintKey))
	return err
}

// Summary is one line on what Run did.
func (r Report) Summary(ds, key string) string {
	stop := fmt.Sprintf("agents of %s stopped in %s", ds, r.StopTook.Round(time.Millisecond))
	if !r.Stopped {
		stop = fmt.Sprintf("agents of %s still stopping after %s", ds, r.StopTook.Round(time.Millisecond))
	}
	if len(r.Untainted) == 0 {
		return stop + "; no node had taint " + key + " left"
	}
	return fmt.Sprintf("%s; taint %s removed from %d node(s): %s", stop, key, len(r.Untainted), strings.Join(r.Untainted, ", "))
}
