// Package archtest holds no code, only tests that enforce the module's dependency rules
// (docs/decisions/0003-core-dependencies.md): the decision core is pure, node sources never talk to the
// API server, and the main module never imports k8s.io/kubernetes.
package archtest
