package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// memoryResult is one janitor's memory with every pod cached.
type memoryResult struct {
	synced             time.Duration
	heapInUse          int64 // go_memstats_heap_inuse_bytes 5 s after the sync (what runs 1-3 reported)
	liveHeap, liveUsed int64 // heap in use and heap allocated right after a forced GC
	peakHeap           int64 // the largest heap any GC cycle saw (gctrace), up to the forced GC
	marked             int64 // the live heap the forced GC marked (gctrace)
	gcs                int   // GC cycles up to the forced GC
	rss, peakRSS       int64
	rssAnon            int64  // RSS without the mapped binary and files
	profile            string // heap profile written at the forced GC
}

// measureMemory starts janitor bin with ttl 1h, so it keeps every pod, waits for its cache to sync
// and the first decisions to settle, then reads its heap, forces a GC (the heap profile of
// /debug/pprof/heap?gc=1) and reads the live heap, the peak heap of the GC trace and RSS.
func measureMemory(ctx context.Context, o options, name, bin, kubeconfig, dir string) error {
	limits := []string{""} // without GOMEMLIMIT first, then each of -memory-limits
	for _, l := range strings.Split(o.memoryLimits, ",") {
		if l = strings.TrimSpace(l); l != "" {
			limits = append(limits, l)
		}
	}
	for _, limit := range limits {
		label := name
		if limit != "" {
			label = name + "+GOMEMLIMIT=" + limit
		}
		if err := measureOne(ctx, o, label, bin, kubeconfig, dir, limit); err != nil {
			return err
		}
	}
	return nil
}

func measureOne(ctx context.Context, o options, name, bin, kubeconfig, dir, limit string) error {
	j, err := startJanitorProcess(ctx, bin, kubeconfig, dir, o,
		janitorSpec{name: "janitor-memory-" + name, ttl: time.Hour, profiling: true, goMemLimit: limit})
	if err != nil {
		return err
	}
	defer j.stop()
	began := time.Now()
	if err := j.waitReady(ctx, o.timeout); err != nil {
		return err
	}
	r := memoryResult{synced: time.Since(began), profile: filepath.Join(dir, "heap-"+name+".pb.gz")}
	time.Sleep(5 * time.Second) // let the first decisions settle
	if r.heapInUse, _, err = j.memory(); err != nil {
		return err
	}
	if err := j.heapProfile(r.profile); err != nil {
		return err
	}
	if err := r.afterGC(j); err != nil {
		return err
	}
	r.print(name, o.pods)
	return nil
}

// afterGC reads the heap right after the forced GC, RSS, and the GC trace so far.
func (r *memoryResult) afterGC(j *janitorProc) error {
	samples, err := j.scrape()
	if err != nil {
		return err
	}
	r.liveHeap, r.liveUsed = int64(samples["go_memstats_heap_inuse_bytes"]), int64(samples["go_memstats_heap_alloc_bytes"])
	if _, r.rss, err = j.memory(); err != nil {
		return err
	}
	if r.rssAnon, err = j.statusField("RssAnon:"); err != nil {
		return err
	}
	if _, r.peakRSS, err = j.usage(); err != nil {
		return err
	}
	f, err := os.Open(j.logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	t, err := readGCTrace(f)
	r.peakHeap, r.marked, r.gcs = t.peak, t.forcedLive, t.cycles
	return err
}

// statusField reads one kB field of /proc/<pid>/status, in bytes.
func (j *janitorProc) statusField(name string) (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", j.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, name); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", name, j.cmd.Process.Pid)
}

func (r memoryResult) print(name string, pods int) {
	fmt.Printf("janitor %s memory with %d terminal pods cached (ttl 1h): synced in %s; heap in use %d MiB; "+
		"forced GC: marked live %d MiB, then heap in use %d MiB, allocated %d MiB; peak heap %d MiB (%d GCs); "+
		"RSS %d MiB (anonymous %d MiB), peak RSS %d MiB; profile %s\n",
		name, pods, r.synced.Round(time.Millisecond), r.heapInUse>>20, r.marked>>20, r.liveHeap>>20, r.liveUsed>>20,
		r.peakHeap>>20, r.gcs, r.rss>>20, r.rssAnon>>20, r.peakRSS>>20, r.profile)
}

// heapProfile saves /debug/pprof/heap?gc=1, which runs a full GC first.
func (j *janitorProc) heapProfile(path string) error {
	resp, err := http.Get("http://" + j.metrics + "/debug/pprof/heap?gc=1")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("heap profile: %s (a janitor without --profiling?)", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// gcTrace matches the heap sizes of a GODEBUG=gctrace=1 line: "..., 40->42->20 MB, 44 MB goal, ...":
// the heap at the start of the cycle, at its end, and the live heap it marked (MiB: the runtime
// shifts by 20).
var gcTrace = regexp.MustCompile(`^gc \d+ @.* (\d+)->(\d+)->(\d+) MB, `)

// gcSummary is what a GC trace says.
type gcSummary struct {
	peak       int64 // the largest heap of any cycle, at its start or end
	forcedLive int64 // the heap the last forced cycle marked live
	cycles     int
}

func readGCTrace(r io.Reader) (gcSummary, error) {
	var s gcSummary
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		m := gcTrace.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s.cycles++
		var mb [3]int64
		for i := range mb {
			mb[i], _ = strconv.ParseInt(m[i+1], 10, 64)
		}
		s.peak = max(s.peak, mb[0]<<20, mb[1]<<20)
		if strings.HasSuffix(line, "(forced)") {
			s.forcedLive = mb[2] << 20
		}
	}
	return s, sc.Err()
}
