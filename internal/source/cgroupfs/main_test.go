package cgroupfs_test

import (
	"os"
	"testing"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
)

func TestMain(m *testing.M) {
	cgrouptest.RunHogIfRequested()
	os.Exit(m.Run())
}
