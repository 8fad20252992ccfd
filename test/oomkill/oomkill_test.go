package oomkill

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// A kernel log in the format of mm/oom_kill.c and mm/memcontrol.c (Linux 6.x, cgroup v1, the cgroupfs
// driver's paths): a kill in a container of the pods cgroup (the pods cgroup's limit hit), a global OOM
// kill of a process elsewhere on the host, a kill in a cgroup that is not the pods cgroup but starts
// with its name, a kill whose summary the kernel rate-limited, and a mems_allowed list with commas.
const kernelLog = `[ 4327.937611] page_reporting_publish_free_bitmap: marked=921171 pfns=6553600 err=0
[ 5631.245200] stress invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=1000
[ 5631.245346] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=3f2a,mems_allowed=0,oom_memcg=/kubepods,task_memcg=/kubepods/besteffort/pod7d1c/3f2a,task=stress,pid=4242,uid=0
[ 5631.245390] Memory cgroup out of memory: Killed process 4242 (stress) total-vm:3153924kB, anon-rss:2096128kB, file-rss:1024kB, shmem-rss:0kB, UID:0 pgtables:4156kB oom_score_adj:1000
[ 5700.000100] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,3,global_oom,task_memcg=/user.slice/session-2.scope,task=qemu-system-x86,pid=777,uid=1000
[ 5700.000200] Out of memory: Killed process 777 (qemu-system-x86) total-vm:8000000kB, anon-rss:4000000kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:9000kB oom_score_adj:0
[ 5800.100000] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/kubepods-other,task_memcg=/kubepods-other/x,task=a,b=c,pid=9,uid=0
[ 5800.100100] Memory cgroup out of memory: Killed process 9 (a,b=c) total-vm:1kB
[ 5900.500000] Memory cgroup out of memory: Killed process 31337 (stress) total-vm:3153924kB
`

func TestParseAttributesEachKillToItsTasksCgroup(t *testing.T) {
	got, err := Parse(strings.NewReader(kernelLog))
	if err != nil {
		t.Fatal(err)
	}
	want := []Kill{
		{At: 5631.245346, Constraint: "CONSTRAINT_MEMCG", OOMMemcg: "/kubepods", TaskMemcg: "/kubepods/besteffort/pod7d1c/3f2a",
			Task: "stress", PID: 4242, Attributed: true},
		{At: 5700.0001, Constraint: "CONSTRAINT_NONE", Global: true, TaskMemcg: "/user.slice/session-2.scope",
			Task: "qemu-system-x86", PID: 777, UID: 1000, Attributed: true},
		{At: 5800.1, Constraint: "CONSTRAINT_MEMCG", OOMMemcg: "/kubepods-other", TaskMemcg: "/kubepods-other/x", Task: "a,b=c",
			PID: 9, Attributed: true},
		{At: 5900.5, PID: 31337},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", got, want)
	}
	in, unattributed := split(got, 5631.0, "kubepods")
	if len(in) != 1 || in[0].PID != 4242 || len(unattributed) != 1 || unattributed[0].PID != 31337 {
		t.Errorf("split(kubepods) = %v, %v: want the stress kill in it and pid 31337 unattributed; the host's "+
			"qemu and /kubepods-other are not the pods cgroup", in, unattributed)
	}
	if in, un := split(got, 5631.245346, "/kubepods/"); len(in) != 0 || len(un) != 1 {
		t.Errorf("split after the stress kill's own timestamp = %v, %v: want only the later unattributed kill", in, un)
	}
	if s := got[0].String(); !strings.Contains(s, "stress pid 4242 in /kubepods/besteffort/pod7d1c/3f2a") {
		t.Errorf("String = %q", s)
	}
	if s := got[3].String(); !strings.Contains(s, "cgroup unknown") {
		t.Errorf("String of an unattributed kill = %q", s)
	}
}

func TestParseNamesTheBadSummaryLine(t *testing.T) {
	for _, l := range []string{
		"[ 1.0] oom-kill:nodemask=(null),task_memcg=/a,task=x,pid=1,uid=0",
		"[ 1.0] oom-kill:constraint=CONSTRAINT_MEMCG,oom_memcg=/a,task_memcg=/a,task=x,pid=one,uid=0",
		"[ 1.0] oom-kill:constraint=CONSTRAINT_MEMCG,oom_memcg=/a,task=x,pid=1,uid=0",
		"[ 1.0] oom-kill:constraint=CONSTRAINT_MEMCG,cpuset=/,task_memcg=/a,task=x,pid=1,uid=0",
		"[ 1.0] oom-kill:constraint=CONSTRAINT_MEMCG,oom_memcg=/a,task_memcg=/a,task=x,pid=1",
	} {
		_, err := Parse(strings.NewReader("[ 0.5] boot\n" + l + "\n"))
		if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), l) {
			t.Errorf("Parse(%q): %v, want an error naming line 2 and the line", l, err)
		}
	}
}

func TestInCgroupIsThePathOrBelowIt(t *testing.T) {
	k := Kill{TaskMemcg: "/kubepods/burstable/pod1/c", Attributed: true}
	for cg, want := range map[string]bool{"/kubepods": true, "kubepods": true, "/kubepods/": true, "/kubepods/burstable": true,
		"/kube": false, "/kubepods/besteffort": false, "/": true} {
		if got := k.InCgroup(cg); got != want {
			t.Errorf("InCgroup(%q) = %v, want %v", cg, got, want)
		}
	}
	if (Kill{PID: 1}).InCgroup("/") {
		t.Error("an unattributed kill is in a cgroup")
	}
}

// FuzzParse: a summary line made of any constraint, memcg paths (no comma: the kubelet's cgroup names
// hold none), command (up to the kernel's 15 bytes, any bytes but a newline), pid and uid, followed by
// its Killed line, parses back to exactly that kill; any input either parses or errors.
func FuzzParse(f *testing.F) {
	f.Add("CONSTRAINT_MEMCG", "/kubepods", "/kubepods/burstable/pod1/c1", "stress", 4242, 0, false, "")
	f.Add("CONSTRAINT_NONE", "", "/user.slice", "a,task=b", 1, 1000, true, "[ 1.0] oom-kill:")
	f.Fuzz(func(t *testing.T, constraint, oomMemcg, taskMemcg, task string, pid, uid int, global bool, noise string) {
		_, _ = Parse(strings.NewReader(noise))
		if pid <= 0 || uid < 0 || len(task) > 15 || strings.ContainsAny(task, "\n\r") ||
			strings.ContainsAny(constraint+oomMemcg+taskMemcg, ",\n\r") {
			return
		}
		ctx := "oom_memcg=" + oomMemcg
		if global {
			ctx, oomMemcg = "global_oom", ""
		}
		log := fmt.Sprintf("[ 12.500000] oom-kill:constraint=%s,nodemask=(null),cpuset=/,mems_allowed=0,2-3,%s,task_memcg=%s,task=%s,pid=%d,uid=%d\n"+
			"[ 12.500100] Memory cgroup out of memory: Killed process %d (%s) total-vm:1kB\n",
			constraint, ctx, taskMemcg, task, pid, uid, pid, task)
		got, err := Parse(strings.NewReader(log))
		if err != nil {
			t.Fatalf("Parse(%q): %v", log, err)
		}
		want := []Kill{{At: 12.5, Constraint: constraint, OOMMemcg: oomMemcg, Global: global, TaskMemcg: taskMemcg, Task: task,
			PID: pid, UID: uid, Attributed: true}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%q) =\n%+v\nwant\n%+v", log, got, want)
		}
	})
}
