// Package testenv is how a test that needs the real environment (root, a real cgroup, a kernel
// feature, a binary on PATH) says it cannot run here: on a developer's machine it skips with the
// reason; under CI=true it fails with the same reason, so CI never skips silently.
//
// A skip that does not go through SkipOrFail must say in a comment why the test never needs the
// environment it skips without (for example: a test whose subject is an older kernel's behaviour).
package testenv
