package main

import (
	"encoding/json"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Case is one differential case read from stdin.
type Case struct {
	Name string `json:"name"`
	// KubeletConfig is a v1beta1 KubeletConfiguration document (JSON). It is loaded with the kubelet's
	// own config-file loader, so defaulting is the kubelet's.
	KubeletConfig json.RawMessage `json:"kubeletConfig"`
	// ExperimentalAllocatableIgnoreEviction is the --experimental-allocatable-ignore-eviction flag.
	ExperimentalAllocatableIgnoreEviction bool `json:"experimentalAllocatableIgnoreEviction,omitempty"`
	// DedicatedImageFs and SplitContainerFs are what the disk info provider answers.
	DedicatedImageFs bool `json:"dedicatedImageFs,omitempty"`
	SplitContainerFs bool `json:"splitContainerFs,omitempty"`
	// StartUnixMilli is the fake clock's time before the first step.
	StartUnixMilli int64 `json:"startUnixMilli"`
	// DropEvicted removes every evicted pod from the active pods of the later steps.
	DropEvicted bool   `json:"dropEvicted,omitempty"`
	Steps       []Step `json:"steps"`
	// Probes are pods offered to the admission handler after every step.
	Probes []v1.Pod `json:"probes,omitempty"`
}

// Step is one synchronize of the eviction manager.
type Step struct {
	// OffsetMillis is the step's time relative to StartUnixMilli; strictly increasing, and at least
	// 1000 ms after a step that evicted (the manager then waits on a 1 s fake ticker).
	OffsetMillis int64             `json:"offsetMillis"`
	Summary      *statsapi.Summary `json:"summary,omitempty"`
	// SummaryError makes the summary provider fail on this step.
	SummaryError bool `json:"summaryError,omitempty"`
	// AfterReclaim is what the summary provider returns after node-level reclaim; nil repeats Summary
	// (the fake image and container GC free nothing).
	AfterReclaim *statsapi.Summary `json:"afterReclaim,omitempty"`
	Pods         []v1.Pod          `json:"pods"`
}

// Result is the oracle's answer for a case.
type Result struct {
	// ConfigError is set when the kubelet rejects the configuration; Steps is then empty.
	ConfigError string       `json:"configError,omitempty"`
	Steps       []StepResult `json:"steps"`
}

// StepResult is what the kubelet did in one step.
type StepResult struct {
	Evictions      []Eviction         `json:"evictions,omitempty"`
	NodeEvents     []Event            `json:"nodeEvents,omitempty"`
	ContainerGC    int                `json:"containerGC,omitempty"`
	ImageGC        int                `json:"imageGC,omitempty"`
	SummaryCalls   int                `json:"summaryCalls"`
	MemoryPressure bool               `json:"memoryPressure,omitempty"`
	DiskPressure   bool               `json:"diskPressure,omitempty"`
	PIDPressure    bool               `json:"pidPressure,omitempty"`
	Admissions     []Admission        `json:"admissions,omitempty"`
	EvictionCounts map[string]float64 `json:"evictionCounts,omitempty"`
}

// Eviction is one call of the kill function, with the pod event recorded just before it.
type Eviction struct {
	UID                 string     `json:"uid"`
	Namespace           string     `json:"namespace"`
	Name                string     `json:"name"`
	IsEvicted           bool       `json:"isEvicted"`
	GracePeriodOverride *int64     `json:"gracePeriodOverride,omitempty"`
	Phase               string     `json:"phase"`
	Reason              string     `json:"reason"`
	Message             string     `json:"message"`
	Condition           *Condition `json:"condition,omitempty"`
	Event               *Event     `json:"event,omitempty"`
}

// Condition is the pod condition the status function set.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Event is a recorded event.
type Event struct {
	Kind        string            `json:"kind"`
	Namespace   string            `json:"namespace,omitempty"`
	Name        string            `json:"name"`
	Type        string            `json:"type"`
	Reason      string            `json:"reason"`
	Message     string            `json:"message"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Admission is the admission handler's answer for a probe pod.
type Admission struct {
	Name    string `json:"name"`
	Admit   bool   `json:"admit"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}
