// Command cluster is the program behind hack/cluster.sh: up [--node], down, env for a
// detached test cluster (see package cluster).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kube-pressure/pressure/test/cluster"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: cluster up [--node] | down | env  (state in $PRESSURE_STATE)")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	node := fs.Bool("node", false, "also start containerd and a kubelet (level 2; needs root)")
	stateDir := fs.String("state", cluster.DefaultStateDir(), "state directory")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	switch args[0] {
	case "up":
		return up(*stateDir, *node)
	case "down":
		return cluster.Down(*stateDir)
	case "env":
		s, err := cluster.ReadState(cluster.StatePath(*stateDir))
		if err != nil {
			return fmt.Errorf("no cluster (run hack/cluster.sh up): %w", err)
		}
		fmt.Printf("export KUBECONFIG=%s\n", s.Kubeconfig)
		return nil
	}
	return fmt.Errorf("unknown command %q: want up, down or env", args[0])
}

func up(stateDir string, node bool) error {
	start := time.Now()
	say := func(s string) { fmt.Fprintf(os.Stderr, "cluster: [%5.1fs] %s\n", time.Since(start).Seconds(), s) }
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	repo, err := cluster.RepoRoot(wd)
	if err != nil {
		return err
	}
	bins, err := cluster.FindBinaries(repo)
	if errors.Is(err, cluster.ErrNotBuilt) {
		say("binaries not built; running hack/build-k8s.sh")
		bins, err = cluster.BuildBinaries(repo, os.Stderr)
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, already, err := cluster.Up(ctx, cluster.DetachedOptions{StateDir: stateDir, Binaries: bins, Node: node, Progress: say})
	if err != nil {
		return fmt.Errorf("%w (logs in %s)", err, stateDir)
	}
	if already {
		say("already up")
	}
	for _, p := range s.Processes {
		say(fmt.Sprintf("%-24s pid %-7d log %s", p.Name, p.PID, p.Log))
	}
	say("ready; kubectl: " + filepath.Join(bins.Dir, "kubectl") + "; eval \"$(hack/cluster.sh env)\"")
	return nil
}
