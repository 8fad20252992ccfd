// Package archtest holds no code, only tests that enforce the module's dependency rules
// (docs/decisions/0003-core-dependencies.md): the decision core (signal, threshold, rank, decision,
// policy, explain, sim, why, evidence) imports only the standard library, itself and resource.Quantity,
// and of the standard library neither os, os/exec, io/fs, syscall, net/... (net/http) nor log; it
// reads no clock and starts no goroutine; the pure converters (kubeconv, scenario) import none of those
// standard packages either; node sources never talk to the API server; internal/cli does
// not import internal/janitor (the evidence format is internal/evidence); and the main module never
// imports k8s.io/kubernetes.
package archtest
