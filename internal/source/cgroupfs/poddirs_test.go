package cgroupfs_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

func TestPodDirsFindsAPodByListingAndRefusesAnUnlistedOrSteeringUID(t *testing.T) {
	for _, fixture := range []string{"cgroupv1-cgroupfs", "cgroupv2-cgroupfs", "cgroupv2-systemd"} {
		t.Run(fixture, func(t *testing.T) {
			l := detect(t, copyFixture(t, fixture))
			dirs, err := l.PodDirs(uidB)
			if err != nil {
				t.Fatalf("PodDirs(%s): %v", uidB, err)
			}
			if len(dirs) != 1 || !strings.HasPrefix(dirs[0], filepath.Join(l.Memory, l.PodsCgroup)+string(filepath.Separator)) {
				t.Errorf("PodDirs(%s) = %v, want one directory below the pods cgroup", uidB, dirs)
			}
			for _, uid := range []string{"00000000-0000-0000-0000-000000000000", "..", "../" + uidB, ""} {
				if dirs, err := l.PodDirs(uid); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("PodDirs(%q) = %v, %v, want an error wrapping fs.ErrNotExist", uid, dirs, err)
				}
			}
		})
	}
}
