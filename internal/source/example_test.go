package source_test

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/source"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/procfs"
)

// A shell detects the cgroup layout once, then takes a snapshot on every tick with its own clock.
func ExampleNode_Snapshot() {
	l, err := cgroupfs.Detector{Root: "cgroupfs/testdata/cgroupv2-systemd"}.Detect()
	if err != nil {
		fmt.Println(err)
		return
	}
	n := &source.Node{Proc: procfs.NewReader("procfs/testdata/proc-k6.18.44"), Cgroup: &cgroupfs.Reader{Layout: l}}
	s, err := n.Snapshot(time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, sig := range s.Signals() {
		o := s.Observations[sig]
		fmt.Printf("%s available=%d capacity=%d\n", sig, o.Available, o.Capacity)
	}
	fmt.Println("pods:", len(s.Pods))
	// Output:
	// allocatableMemory.available available=6979321856 capacity=7516192768
	// memory.available available=23665897472 capacity=25276510208
	// pid.available available=32559 capacity=32768
	// pods: 3
}
