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

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

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
		return errors.New("usage: cluster up [--node [--pods-memory 2Gi] [--kubelet-config FILE]] | down | env | node-lock [--check]  (state in $PRESSURE_STATE)")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	node := fs.Bool("node", false, "also start containerd and a kubelet (level 2; needs root)")
	stateDir := fs.String("state", cluster.DefaultStateDir(), "state directory")
	kubeletFile := fs.String("kubelet-config", "", "up --node: KubeletConfiguration file (YAML or JSON) merged onto the harness defaults")
	check := fs.Bool("check", false, "node-lock: say who holds the lock without waiting; fail only for a detached cluster")
	podsMemory := fs.String("pods-memory", "", "up --node: limit of the pods cgroup, e.g. 2Gi (sets kubeReserved memory = MemTotal - this)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	switch args[0] {
	case "up":
		kc, err := kubeletConfig(*kubeletFile, *podsMemory)
		if err != nil {
			return err
		}
		return up(*stateDir, *node, kc)
	case "down":
		return cluster.Down(*stateDir)
	case "node-lock":
		say := func(s string) { fmt.Fprintln(os.Stderr, "cluster:", s) }
		if *check {
			// First thing make test does: a detached cluster (make demo) fails at once with how to
			// stop it; a test run holding the lock is named (the level-2 tests wait for it, saying so).
			held, err := cluster.CheckNodeLock(cluster.NodeLockPath)
			if held != "" {
				say("the node lock " + cluster.NodeLockPath + " is " + held + "; the end-to-end tests will wait for it")
			}
			return err
		}
		// Before the level-2 tests: say at once who holds the node lock and wait for it with a
		// line every 30 s; a detached cluster (make demo) fails at once with how to stop it.
		return cluster.WaitNodeLock(context.Background(), cluster.NodeLockPath, say, 30*time.Second)
	case "env":
		s, err := cluster.ReadState(cluster.StatePath(*stateDir))
		if err != nil {
			return fmt.Errorf("no cluster (run hack/cluster.sh up): %w", err)
		}
		fmt.Printf("export KUBECONFIG=%s\n", s.Kubeconfig)
		return nil
	}
	return fmt.Errorf("unknown command %q: want up, down, env or node-lock", args[0])
}

func up(stateDir string, node bool, kc *kubeletv1beta1.KubeletConfiguration) error {
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
	// Generous: StartNode first waits for the machine-wide node lock, which a test elsewhere may
	// hold for a while.
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	s, already, err := cluster.Up(ctx, cluster.DetachedOptions{StateDir: stateDir, Binaries: bins, Node: node, KubeletConfig: kc, Progress: say})
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
