// Package agent holds the pressure-agent configuration: the versioned file type AgentConfiguration
// (apiVersion pressure.kube-pressure.io/v1alpha1, kind AgentConfiguration), its strict loader (YAML or
// JSON; unknown and duplicate fields are rejected), the command-line flags that override it
// (Overrides), defaults, Validate, which returns every problem at once, each naming the file, the field
// and the value, and Convert, which yields the typed Config.
//
// This is the agent's one configuration path: Overrides.Resolve runs Load → flags → SetDefaults →
// Validate → Convert (Complete does the last three, as kubectl pressure explain and simulate do), and
// the result yields the policy's settings (Config.PolicyConfig) and, through internal/agent's
// FromConfig, which writes no default of its own, the shell's. Each default is written once, in
// defaults.go, or in the lower package that also needs it (policy, loopbreaker, actuate, the sources),
// referenced from defaults.go; Defaults(node) is a file that sets only nodeName, defaulted.
//
// Absent is not zero: every optional field of the file type is a pointer, so "dryRun: false" and an
// unset dryRun are told apart, and a headroom of "0" (act exactly at the kubelet's threshold) differs
// from an unset one (the default). Every field, its default and its unit is listed in
// docs/agent-config.md, and tests fail when that table, the chart's values.schema.json, its ConfigMap
// template or its values files disagree with the type or the defaults (agreement_test.go,
// docs_test.go); deploy/examples/agent-config.yaml is loaded by a test.
package agent
