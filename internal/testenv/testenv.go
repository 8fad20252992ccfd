package testenv

import (
	"os"
	"testing"
)

// InCI reports whether CI=true: environment problems then fail tests instead of skipping them.
func InCI() bool { return os.Getenv("CI") == "true" }

// SkipOrFail skips t with the formatted reason, or fails it with that reason under CI=true.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf("CI=true, so not skipping: "+format, args...)
	}
	t.Skipf(format, args...)
}
