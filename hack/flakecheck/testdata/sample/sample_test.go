// Package sample is make flake-check's test subject (hack/flakecheck): one test with two subtests.
package sample

import "testing"

func TestA(t *testing.T) {
	t.Run("sub", func(t *testing.T) {})
	t.Run("other", func(t *testing.T) {})
}
