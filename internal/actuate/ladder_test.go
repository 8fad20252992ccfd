package actuate

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/loopbreaker/loopbreakertest"
	"github.com/kube-pressure/pressure/internal/policy"
)

// apiScript answers eviction and delete calls from queues and records what was asked; a list of pods
// (the ladder's read of the pod after its PDB fallback wait) answers with ended, or with the running
// pod shop/web-0 uid-web-0.
type apiScript struct {
	mu        sync.Mutex
	evictions []error // one answer per call; nil = accepted
	deletes   []error
	calls     []string // "evict ns/name grace uid" or "delete ..."
	options   []*metav1.DeleteOptions
	ended     *corev1.Pod // nil: the pod runs on; else what a read of it returns (empty name: not found)
	reads     int
}

// pod is what a read of shop/web-0 returns.
func (s *apiScript) pod() *corev1.PodList {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", UID: "uid-web-0"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if s.ended != nil {
		if s.ended.Name == "" {
			return &corev1.PodList{}
		}
		p = s.ended
	}
	return &corev1.PodList{Items: []corev1.Pod{*p}}
}

func next(q *[]error) error {
	if len(*q) == 0 {
		return nil
	}
	err := (*q)[0]
	*q = (*q)[1:]
	return err
}

func (s *apiScript) client() *fake.Clientset {
	c := fake.NewClientset()
	c.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		ev := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.calls = append(s.calls, "evict "+ev.Namespace+"/"+ev.Name)
		s.options = append(s.options, ev.DeleteOptions)
		return true, nil, next(&s.evictions)
	})
	c.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.reads++
		return true, s.pod(), nil
	})
	c.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteAction)
		opts := d.GetDeleteOptions()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.calls = append(s.calls, "delete "+d.GetNamespace()+"/"+d.GetName())
		s.options = append(s.options, &opts)
		return true, nil, next(&s.deletes)
	})
	return c
}

type recordingKiller struct {
	killed []types.UID
	err    error
}

func (k *recordingKiller) KillPod(uid types.UID) (int, error) {
	k.killed = append(k.killed, uid)
	return 2, k.err
}

var t0 = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

func request(hard bool) Request {
	return Request{
		Pod:                PodRef{Namespace: "shop", Name: "web-0", UID: "uid-web-0"},
		Owner:              policy.Workload{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "shop", Name: "web", UID: "uid-sts"},
		GracePeriodSeconds: 1, Hard: hard, Signal: "memory.available", Observed: "80Mi", Threshold: "356Mi",
		Rank: 1, DecidedBy: "memory", Message: "The node was low on resource: memory. ",
		Annotations: map[string]string{"offending_containers": "app"},
	}
}

type ladderRun struct {
	script *apiScript
	killer *recordingKiller
	events *record.FakeRecorder
	clock  *testingclock.FakeClock
	ladder *Ladder
}

func newLadderRun(cfg LadderConfig) *ladderRun {
	r := &ladderRun{script: &apiScript{}, killer: &recordingKiller{}, events: record.NewFakeRecorder(10),
		clock: testingclock.NewFakeClock(t0)}
	r.ladder = &Ladder{Evictor: &Evictor{Client: r.script.client()}, Killer: r.killer,
		Events: &Events{Recorder: r.events, Node: "node-a"}, Clock: r.clock, Config: cfg}
	return r
}

// evict runs the ladder, stepping the fake clock whenever the ladder waits.
func (r *ladderRun) evict(t *testing.T, req Request) Result {
	t.Helper()
	done := make(chan Result)
	go func() {
		res, err := r.ladder.Evict(context.Background(), req)
		if err != nil {
			t.Errorf("Evict: %v", err)
		}
		done <- res
	}()
	for {
		select {
		case res := <-done:
			return res
		case <-time.After(time.Millisecond):
			if r.clock.HasWaiters() {
				r.clock.Step(r.ladder.Config.PDBFallbackWait)
			}
		}
	}
}

func (r *ladderRun) eventReasons() []string {
	var out []string
	for {
		select {
		case e := <-r.events.Events:
			out = append(out, strings.Fields(e)[1])
		default:
			return out
		}
	}
}

func rungs(res Result) []string {
	var out []string
	for _, a := range res.Attempts {
		out = append(out, string(a.Rung)+":"+string(a.Outcome))
	}
	return out
}

var full = LadderConfig{PDBFallbackWait: DefaultPDBFallbackWait, AllowDelete: true, AllowCgroupKill: true}

func TestLadder(t *testing.T) {
	// The API down: no HTTP answer at all (what client-go returns when the dial is refused).
	unavailable := &url.Error{Op: "Post", URL: "https://10.0.0.1/api/v1/namespaces/shop/pods/web-0/eviction",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	cases := []struct {
		name       string
		cfg        LadderConfig
		hard       bool
		evictions  []error
		deletes    []error
		wantCalls  []string
		wantRungs  []string
		wantKilled int
		wantEvents []string
		ended      *corev1.Pod
	}{
		{name: "accepted eviction uses the eviction API only", cfg: full, hard: true,
			wantCalls: []string{"evict shop/web-0"}, wantRungs: []string{"eviction-api:evicted"},
			wantEvents: []string{ReasonPressureEviction}},
		{name: "soft threshold blocked by PDB never falls back to delete", cfg: full, hard: false,
			evictions: []error{pdbError(true)},
			wantCalls: []string{"evict shop/web-0"}, wantRungs: []string{"eviction-api:blocked-by-pdb"},
			wantEvents: []string{ReasonPressureEvictionFailed}},
		{name: "hard threshold blocked by PDB twice is deleted after the wait", cfg: full, hard: true,
			evictions:  []error{pdbError(true), pdbError(true)},
			wantCalls:  []string{"evict shop/web-0", "evict shop/web-0", "delete shop/web-0"},
			wantRungs:  []string{"eviction-api:blocked-by-pdb", "eviction-api:blocked-by-pdb", "delete:evicted"},
			wantEvents: []string{ReasonPressureEviction}},
		{name: "hard threshold whose PDB allows after the wait is not deleted", cfg: full, hard: true,
			evictions:  []error{pdbError(true), nil},
			wantCalls:  []string{"evict shop/web-0", "evict shop/web-0"},
			wantRungs:  []string{"eviction-api:blocked-by-pdb", "eviction-api:evicted"},
			wantEvents: []string{ReasonPressureEviction}},
		{name: "hard threshold blocked by PDB without allowDelete stays blocked", cfg: LadderConfig{PDBFallbackWait: time.Second}, hard: true,
			evictions: []error{pdbError(true)},
			wantCalls: []string{"evict shop/web-0"}, wantRungs: []string{"eviction-api:blocked-by-pdb"},
			wantEvents: []string{ReasonPressureEvictionFailed}},
		{name: "pod already gone is success-like and not retried", cfg: full, hard: true,
			evictions: []error{apierrors.NewNotFound(podsGR, "web-0")},
			wantCalls: []string{"evict shop/web-0"}, wantRungs: []string{"eviction-api:gone"}},
		{name: "hard threshold with the API down kills the pod's cgroups", cfg: full, hard: true,
			evictions: []error{unavailable},
			wantCalls: []string{"evict shop/web-0"}, wantRungs: []string{"eviction-api:unavailable", "cgroup-kill:killed"},
			wantKilled: 2, wantEvents: []string{ReasonPressureEviction}},
		{name: "hard threshold answered 503 is retried through the API, never killed", cfg: full, hard: true,
			evictions: []error{apierrors.NewServiceUnavailable("apiserver shutting down")},
			wantCalls: []string{"evict shop/web-0"}, wantRungs: []string{"eviction-api:unavailable"},
			wantEvents: []string{ReasonPressureEvictionFailed}},
		{name: "hard threshold answered 429 (throttling) is retried through the API, never killed", cfg: full, hard: true,
			evictions: []error{apierrors.NewTooManyRequests("slow down", 1)},
			wantCalls: []string{"evict shop/web-0"}, wantRungs: []string{"eviction-api:unavailable"},
			wantEvents: []string{ReasonPressureEvictionFailed}},
		{name: "hard threshold answered 500 is retried through the API, never killed", cfg: full, hard: true,
			evictions: []error{apierrors.NewInternalError(errors.New("etcd"))},
			wantCalls: []string{"evict shop/web-0"}, wantRungs: []string{"eviction-api:unavailable"},
			wantEvents: []string{ReasonPressureEvictionFailed}},
		{name: "soft threshold with the API down is not killed", cfg: full, hard: false,
			evictions: []error{unavailable},
			wantCalls: []string{"evict shop/web-0"}, wantRungs: []string{"eviction-api:unavailable"},
			wantEvents: []string{ReasonPressureEvictionFailed}},
		{name: "cgroup kill not allowed leaves the API outage as the result", cfg: LadderConfig{AllowDelete: true}, hard: true,
			evictions: []error{unavailable},
			wantCalls: []string{"evict shop/web-0"}, wantRungs: []string{"eviction-api:unavailable"},
			wantEvents: []string{ReasonPressureEvictionFailed}},
		{name: "delete refused by UID precondition means the pod was replaced", cfg: full, hard: true,
			evictions: []error{pdbError(true), pdbError(true)},
			deletes:   []error{apierrors.NewConflict(podsGR, "web-0", errors.New("Precondition failed: UID in precondition: uid-web-0, UID in object meta: other"))},
			wantCalls: []string{"evict shop/web-0", "evict shop/web-0", "delete shop/web-0"},
			wantRungs: []string{"eviction-api:blocked-by-pdb", "eviction-api:blocked-by-pdb", "delete:gone"}},
		{name: "delete with the API down under hard pressure kills", cfg: full, hard: true,
			evictions: []error{pdbError(true), pdbError(true)}, deletes: []error{unavailable},
			wantCalls:  []string{"evict shop/web-0", "evict shop/web-0", "delete shop/web-0"},
			wantRungs:  []string{"eviction-api:blocked-by-pdb", "eviction-api:blocked-by-pdb", "delete:unavailable", "cgroup-kill:killed"},
			wantKilled: 2, wantEvents: []string{ReasonPressureEviction}},
		{name: "a PDB-refused pod the kubelet evicted during the fallback wait is not asked again", cfg: full, hard: true,
			evictions: []error{pdbError(true), pdbError(true)}, ended: ended(corev1.PodFailed, "uid-web-0", false),
			wantCalls: []string{"evict shop/web-0"}, wantRungs: []string{"eviction-api:blocked-by-pdb", "recheck:gone"}},
		{name: "a PDB-refused pod that terminated during the fallback wait is not asked again", cfg: full, hard: true,
			evictions: []error{pdbError(true), pdbError(true)}, ended: ended(corev1.PodRunning, "uid-web-0", true),
			wantCalls: []string{"evict shop/web-0"}, wantRungs: []string{"eviction-api:blocked-by-pdb", "recheck:gone"}},
		{name: "a PDB-refused pod replaced during the fallback wait is not asked again", cfg: full, hard: true,
			evictions: []error{pdbError(true), pdbError(true)}, ended: ended(corev1.PodRunning, "uid-other", false),
			wantCalls: []string{"evict shop/web-0"}, wantRungs: []string{"eviction-api:blocked-by-pdb", "recheck:gone"}},
		{name: "a PDB-refused pod deleted during the fallback wait is not asked again", cfg: full, hard: true,
			evictions: []error{pdbError(true), pdbError(true)}, ended: &corev1.Pod{},
			wantCalls: []string{"evict shop/web-0"}, wantRungs: []string{"eviction-api:blocked-by-pdb", "recheck:gone"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newLadderRun(tc.cfg)
			r.script.evictions, r.script.deletes, r.script.ended = tc.evictions, tc.deletes, tc.ended
			res := r.evict(t, request(tc.hard))
			if diff := cmp.Diff(r.script.calls, tc.wantCalls); diff != "" {
				t.Errorf("API calls (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(rungs(res), tc.wantRungs); diff != "" {
				t.Errorf("rungs (-got +want):\n%s", diff)
			}
			if res.Killed != tc.wantKilled {
				t.Errorf("killed %d, want %d", res.Killed, tc.wantKilled)
			}
			if diff := cmp.Diff(r.eventReasons(), tc.wantEvents); diff != "" {
				t.Errorf("events (-got +want):\n%s", diff)
			}
			for i, o := range r.script.options {
				if o == nil || o.GracePeriodSeconds == nil || *o.GracePeriodSeconds != 1 ||
					o.Preconditions == nil || o.Preconditions.UID == nil || *o.Preconditions.UID != "uid-web-0" {
					t.Errorf("call %d: delete options %+v lack grace 1 and UID precondition uid-web-0", i, o)
				}
			}
		})
	}
}

// ended is shop/web-0 as a read returns it after the wait: phase, uid, terminating.
func ended(phase corev1.PodPhase, uid types.UID, terminating bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", UID: uid}, Status: corev1.PodStatus{Phase: phase}}
	if terminating {
		p.DeletionTimestamp = &metav1.Time{Time: t0}
	}
	return p
}

func TestLadderWaitsForTheFallbackBeforeAskingAgain(t *testing.T) {
	r := newLadderRun(full)
	r.script.evictions = []error{pdbError(true), pdbError(true)}
	done := make(chan Result)
	go func() { res, _ := r.ladder.Evict(context.Background(), request(true)); done <- res }()
	for !r.clock.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	r.clock.Step(DefaultPDBFallbackWait - time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	r.script.mu.Lock()
	calls := len(r.script.calls)
	r.script.mu.Unlock()
	if calls != 1 {
		t.Errorf("%d API calls before the wait elapsed, want 1", calls)
	}
	r.clock.Step(time.Millisecond)
	res := <-done
	if res.Rung != RungDelete || res.Outcome != OutcomeEvicted {
		t.Errorf("result %s/%s, want delete/evicted", res.Rung, res.Outcome)
	}
}

func TestLadderCancelledDuringTheWaitDoesNotDelete(t *testing.T) {
	r := newLadderRun(full)
	r.script.evictions = []error{pdbError(true)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() { res, _ := r.ladder.Evict(ctx, request(true)); done <- res }()
	for !r.clock.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	cancel()
	res := <-done
	if diff := cmp.Diff(rungs(res), []string{"eviction-api:blocked-by-pdb"}); diff != "" {
		t.Errorf("rungs (-got +want):\n%s", diff)
	}
}

func TestLadderDryRunCallsNothingAndWritesAWouldEvictEvent(t *testing.T) {
	cfg := full
	cfg.DryRun = true
	r := newLadderRun(cfg)
	res := r.evict(t, request(true))
	if res.Outcome != OutcomeDryRun || len(res.Attempts) != 0 {
		t.Errorf("result %+v, want dry-run without attempts", res)
	}
	if len(r.script.calls) != 0 || len(r.killer.killed) != 0 {
		t.Errorf("dry-run called the API %v or killed %v", r.script.calls, r.killer.killed)
	}
	if diff := cmp.Diff(r.eventReasons(), []string{ReasonPressureEvictionDryRun}); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
}

// recordingParams records the avoidances published, in the order of the API calls.
type recordingParams struct {
	script *apiScript
	writes [][]policy.Avoidance
}

func (p *recordingParams) Write(_ context.Context, as []policy.Avoidance) error {
	p.script.mu.Lock()
	defer p.script.mu.Unlock()
	p.script.calls = append(p.script.calls, "params")
	p.writes = append(p.writes, as)
	return nil
}

func TestLadderPublishesTheAvoidanceBeforeEvicting(t *testing.T) {
	cases := []struct {
		name      string
		evictions []error
		wantCalls []string
		wantAvoid int // avoidances in force after the ladder
	}{
		{"evicted: published before the request and kept", nil,
			[]string{"params", "evict shop/web-0"}, 1},
		{"refused by a PDB (soft): published, then taken back", []error{pdbError(true)},
			[]string{"params", "evict shop/web-0", "params"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newLadderRun(LadderConfig{})
			r.script.evictions = tc.evictions
			params := &recordingParams{script: r.script}
			pl, err := loopbreaker.LoadLedger(context.Background(), &loopbreakertest.Store{}, policy.LoopConfig{Cooldown: 5 * time.Minute}, params)
			if err != nil {
				t.Fatal(err)
			}
			r.ladder.Ledger = pl
			r.evict(t, request(false))
			if diff := cmp.Diff(r.script.calls, tc.wantCalls); diff != "" {
				t.Errorf("calls (-got +want):\n%s", diff)
			}
			want := []policy.Avoidance{{Owner: request(false).Owner, Until: t0.Add(5 * time.Minute)}}
			if diff := cmp.Diff(params.writes[0], want); diff != "" {
				t.Errorf("first publication (-got +want):\n%s", diff)
			}
			if got := pl.Avoidances(t0); len(got) != tc.wantAvoid {
				t.Errorf("avoidances after the ladder %+v, want %d", got, tc.wantAvoid)
			}
		})
	}
}

func TestEvictedEventCarriesTheDecisionAndAnnotations(t *testing.T) {
	rec := record.NewFakeRecorder(1)
	rec.IncludeObject = true
	ev := &Events{Recorder: rec, Node: "node-a"}
	ev.Evicted(request(true), Result{Outcome: OutcomeEvicted, Rung: RungDelete})
	got := <-rec.Events
	for _, want := range []string{"Warning PressureEviction", "via delete", "signal memory.available observed 80Mi, threshold 356Mi (hard)",
		"rank 1 decided by memory", "grace 1s", "The node was low on resource: memory.", "offending_containers:app",
		AnnotationRung + ":delete", "involvedObject{kind=Pod,apiVersion=v1}"} {
		if !strings.Contains(got, want) {
			t.Errorf("event %q lacks %q", got, want)
		}
	}
}

var podsGR = schema.GroupResource{Resource: "pods"}

func TestLadderWaitsForANewAvoidanceToSettleBeforeEvicting(t *testing.T) {
	r := newLadderRun(LadderConfig{AvoidanceSettle: DefaultAvoidanceSettle, PDBFallbackWait: DefaultAvoidanceSettle})
	params := &recordingParams{script: r.script}
	pl, err := loopbreaker.LoadLedger(context.Background(), &loopbreakertest.Store{}, policy.LoopConfig{}, params)
	if err != nil {
		t.Fatal(err)
	}
	r.ladder.Ledger = pl
	r.evict(t, request(false))
	if waited := r.clock.Since(t0); waited != DefaultAvoidanceSettle {
		t.Errorf("waited %s before the eviction, want %s", waited, DefaultAvoidanceSettle)
	}
	again := request(false)
	again.Pod.UID, again.Pod.Name = "uid-web-1", "web-1"
	before := r.clock.Now()
	r.evict(t, again)
	if waited := r.clock.Since(before); waited != 0 {
		t.Errorf("waited %s for an avoidance already published, want no wait", waited)
	}
}

// ctxStore is a ledger store whose saves fail once their context is done, as an API call would.
type ctxStore struct{ loopbreakertest.Store }

func (s *ctxStore) Save(ctx context.Context, b []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.Store.Save(ctx, b)
}

func TestLadderRecordsAnEvictionMadeWhileTheAgentStops(t *testing.T) {
	r := newLadderRun(full)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := r.script.client()
	// The agent is told to stop while the Eviction API call is on the wire: it answers, then the
	// agent's context is cancelled.
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		cancel()
		return false, nil, nil
	})
	r.ladder.Evictor = &Evictor{Client: client}
	store := &ctxStore{}
	pl, err := loopbreaker.LoadLedger(context.Background(), store, policy.LoopConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.ladder.Ledger = pl
	res, err := r.ladder.Evict(ctx, request(true))
	if res.Outcome != OutcomeEvicted || err != nil {
		t.Fatalf("outcome %s, err %v; want evicted and the ledger written", res.Outcome, err)
	}
	if es := pl.Entries(); len(es) != 1 || es[0].UID != string(request(true).Pod.UID) || es[0].SettledAt != nil {
		t.Error("the ledger does not hold the eviction made while the agent stopped")
	}
	if store.Saves() != 2 {
		t.Errorf("ledger saved %d times, want 2 (the avoidance, the eviction)", store.Saves())
	}
}
