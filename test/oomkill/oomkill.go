package oomkill

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// Kill is one OOM kill: the kernel's "oom-kill:" summary line (mm/oom_kill.c dump_oom_summary), e.g.
//
//	[ 5631.245346] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=c1,mems_allowed=0,oom_memcg=/kubepods,task_memcg=/kubepods/burstable/pod1/c1,task=stress,pid=4242,uid=0
//
// or, when the kernel rate-limited that summary, only its "Killed process" line (Attributed false).
type Kill struct {
	// At is the line's timestamp, seconds since boot.
	At float64
	// Constraint is CONSTRAINT_NONE, CONSTRAINT_MEMCG, ... ("" when not attributed).
	Constraint string
	// OOMMemcg is the memory cgroup whose limit was hit; "" for a global OOM (Global).
	OOMMemcg string
	Global   bool
	// TaskMemcg is the killed task's memory cgroup, e.g. /kubepods/burstable/pod<uid>/<container>.
	TaskMemcg string
	Task      string
	PID, UID  int
	// Attributed is false for a "Killed process" line without a summary line of the same pid: the
	// kernel rate-limits the summary (not the kill), so its cgroup is unknown.
	Attributed bool
}

// killedRE matches the kill's own line: "Memory cgroup out of memory: Killed process 4242 (stress) ..."
// or "Out of memory: Killed process ...".
var killedRE = regexp.MustCompile(`Killed process (\d+) \(`)

// Parse reads a kernel log (dmesg's output, "[seconds] text" lines) and returns its OOM kills in order.
// A summary line it cannot read is an error naming the line number and the line; lines without a
// timestamp are skipped.
func Parse(r io.Reader) ([]Kill, error) {
	var out []Kill
	summarized := map[int]bool{} // pids with a summary line not yet matched by their Killed line
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		at, text, ok := timestamp(sc.Text())
		if !ok {
			continue
		}
		if i := strings.Index(text, "oom-kill:"); i >= 0 {
			k, err := parseSummary(text[i+len("oom-kill:"):])
			if err != nil {
				return nil, fmt.Errorf("kernel log line %d %q: %w", n, sc.Text(), err)
			}
			k.At = at
			summarized[k.PID] = true
			out = append(out, k)
			continue
		}
		m := killedRE.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, fmt.Errorf("kernel log line %d %q: pid: %w", n, sc.Text(), err)
		}
		if summarized[pid] {
			delete(summarized, pid)
			continue
		}
		out = append(out, Kill{At: at, PID: pid})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("kernel log: %w", err)
	}
	return out, nil
}

// timestamp splits "[ 5631.245346] text" into its seconds and text.
func timestamp(l string) (float64, string, bool) {
	end := strings.IndexByte(l, ']')
	if !strings.HasPrefix(l, "[") || end < 0 {
		return 0, "", false
	}
	ts, err := strconv.ParseFloat(strings.TrimSpace(l[1:end]), 64)
	if err != nil {
		return 0, "", false
	}
	return ts, strings.TrimPrefix(l[end+1:], " "), true
}

// parseSummary parses what follows "oom-kill:": constraint=C,nodemask=..,cpuset=..,mems_allowed=..,
// then oom_memcg=PATH or global_oom, then task_memcg=PATH,task=COMM,pid=N,uid=N. nodemask and
// mems_allowed are bitmap lists that may hold commas, so the fields are found by their keys: the pid
// and uid from the end, the task_memcg path up to the first ",task=" after it (a cgroup path of the
// kubelet's holds no comma), the command after that (it may hold anything).
func parseSummary(s string) (Kill, error) {
	k := Kill{Attributed: true}
	c, ok := strings.CutPrefix(s, "constraint=")
	if !ok {
		return k, fmt.Errorf("no constraint= at the start")
	}
	k.Constraint, _, _ = strings.Cut(c, ",")
	i := strings.LastIndex(s, ",uid=")
	if i < 0 {
		return k, fmt.Errorf("no uid=")
	}
	uid, err := strconv.Atoi(s[i+len(",uid="):])
	if err != nil {
		return k, fmt.Errorf("uid: %w", err)
	}
	s = s[:i]
	i = strings.LastIndex(s, ",pid=")
	if i < 0 {
		return k, fmt.Errorf("no pid=")
	}
	pid, err := strconv.Atoi(s[i+len(",pid="):])
	if err != nil {
		return k, fmt.Errorf("pid: %w", err)
	}
	k.PID, k.UID, s = pid, uid, s[:i]
	i = strings.LastIndex(s, ",task_memcg=")
	if i < 0 {
		return k, fmt.Errorf("no task_memcg=")
	}
	head, rest := s[:i], s[i+len(",task_memcg="):]
	path, task, ok := strings.Cut(rest, ",task=")
	if !ok {
		return k, fmt.Errorf("no task= after task_memcg=")
	}
	k.TaskMemcg, k.Task = path, task
	switch {
	case strings.HasSuffix(head, ",global_oom"):
		k.Global = true
	case strings.Contains(head, ",oom_memcg="):
		k.OOMMemcg = head[strings.LastIndex(head, ",oom_memcg=")+len(",oom_memcg="):]
	default:
		return k, fmt.Errorf("neither oom_memcg= nor global_oom")
	}
	return k, nil
}

// InCgroup reports whether the killed task's memory cgroup is cgroup (a path such as "/kubepods") or
// below it. An unattributed kill is in no cgroup: see Attributed.
func (k Kill) InCgroup(cgroup string) bool {
	cgroup = "/" + strings.Trim(cgroup, "/")
	return k.Attributed && (k.TaskMemcg == cgroup || strings.HasPrefix(k.TaskMemcg, strings.TrimSuffix(cgroup, "/")+"/"))
}

// String is the kill as a test prints it.
func (k Kill) String() string {
	if !k.Attributed {
		return fmt.Sprintf("[%.6f] pid %d killed, its cgroup unknown (the kernel rate-limited the oom-kill summary)", k.At, k.PID)
	}
	return fmt.Sprintf("[%.6f] %s pid %d in %s", k.At, k.Task, k.PID, k.TaskMemcg)
}

// Since returns the kills of the kernel log stamped after mark (seconds since boot) that are in cgroup
// or below it, and separately the unattributed ones (whose summary the kernel rate-limited: they may be
// in cgroup). A test counts both: it cannot tell an unattributed kill from one of its own.
func Since(mark float64, cgroup string) (in, unattributed []Kill, err error) {
	kills, err := dmesg()
	if err != nil {
		return nil, nil, err
	}
	in, unattributed = split(kills, mark, cgroup)
	return in, unattributed, nil
}

// split is Since on kills already read.
func split(kills []Kill, mark float64, cgroup string) (in, unattributed []Kill) {
	for _, k := range kills {
		switch {
		case k.At <= mark:
		case !k.Attributed:
			unattributed = append(unattributed, k)
		case k.InCgroup(cgroup):
			in = append(in, k)
		}
	}
	return in, unattributed
}

// Mark is the timestamp of the kernel log's last line: Since counts what comes after it. Counting lines
// before and after would not do: the ring buffer is bounded, old lines roll off as new ones arrive.
func Mark() (float64, error) {
	out, err := exec.Command("dmesg").Output()
	if err != nil {
		return 0, fmt.Errorf("dmesg: %w", err)
	}
	mark := 0.0
	for _, l := range strings.Split(string(out), "\n") {
		if ts, _, ok := timestamp(l); ok {
			mark = ts
		}
	}
	return mark, nil
}

func dmesg() ([]Kill, error) {
	out, err := exec.Command("dmesg").Output()
	if err != nil {
		return nil, fmt.Errorf("dmesg: %w", err)
	}
	kills, err := Parse(strings.NewReader(string(out)))
	if err != nil {
		return nil, fmt.Errorf("dmesg: %w", err)
	}
	return kills, nil
}
