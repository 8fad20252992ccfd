// Package agent holds the pressure-agent configuration: the versioned file type AgentConfiguration
// (apiVersion pressure.kube-pressure.io/v1alpha1, kind AgentConfiguration), its strict loader (YAML or
// JSON; unknown and duplicate fields are rejected), defaults, Validate, which returns every problem at
// once, each naming the file, the field and the value, and Convert, which yields the typed Config the
// agent runs with.
//
// Config flows one way: Load → SetDefaults → Validate → Convert (Complete does the last three).
// Absent is not zero: every optional field of the file type is a pointer, so "dryRun: false" and an
// unset dryRun are told apart, and a headroom of "0" (act exactly at the kubelet's threshold) differs
// from an unset one (the default). Every field, its default and its unit is listed in
// docs/agent-config.md; deploy/examples/agent-config.yaml is loaded by a test.
package agent
