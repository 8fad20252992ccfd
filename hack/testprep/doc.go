// Package testprep tests hack/test-prep.sh, the part of make test that prepares the machine (lint, the
// pinned Kubernetes binaries, helm, the node's and the guest's packages) with its jobs side by side. The
// tests replace each job's command with a stand-in (PREP_<JOB>) and run the real script.
package testprep
