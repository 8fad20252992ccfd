package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/test/vm"
)

// guestArgs drops -guest and -guest-nice from the command line passed on to the guest.
func guestArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := strings.TrimLeft(args[i], "-")
		switch {
		case a == "guest" || strings.HasPrefix(a, "guest="):
		case a == "guest-nice":
			i++
		case strings.HasPrefix(a, "guest-nice="):
		default:
			out = append(out, args[i])
		}
	}
	return out
}

// runInGuest builds this benchmark statically, boots the test/vm guest (2 vCPUs, 1.5 GiB) and runs it
// there on the guest's cgroup2 hierarchy; the report goes to stdout.
func runInGuest(args []string, nice int) error {
	g, err := vm.Find("")
	if err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "pressure-detection-guest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	b := vm.Builder{Root: root, Out: dir, Nice: nice}
	initBin, err := b.Init(ctx)
	if err != nil {
		return err
	}
	bin, err := b.Command(ctx, "./bench/detection")
	if err != nil {
		return err
	}
	prog := vm.Program{Name: "detection", Host: bin, Args: append(args, "-cgroup2-root", "/sys/fs/cgroup")}
	res, err := g.Run(ctx, initBin, []vm.Program{prog}, vm.Options{Dir: dir, Nice: nice})
	if err != nil {
		return err
	}
	fmt.Print(res[0].Output)
	if res[0].Exit != 0 {
		return fmt.Errorf("in the guest: exit %d", res[0].Exit)
	}
	return nil
}
