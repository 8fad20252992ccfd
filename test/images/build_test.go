package images

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"
)

// built is the one BuildAll of this test binary, shared by the tests that need images.
type built struct {
	once sync.Once
	dir  string
	imgs []Image
	err  error
}

func (b *built) get(t *testing.T) []Image {
	t.Helper()
	b.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		b.imgs, b.err = BuildAll(ctx, b.dir)
	})
	if b.err != nil {
		t.Fatalf("BuildAll(%s): %v", b.dir, b.err)
	}
	return b.imgs
}

func (b *built) image(t *testing.T, name string) Image {
	t.Helper()
	for _, img := range b.get(t) {
		if img.Name == name {
			return img
		}
	}
	t.Fatalf("BuildAll returned no image %s", name)
	return Image{}
}

var shared built

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pressure-images-test-")
	if err != nil {
		panic(err)
	}
	shared.dir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestBuildAllReturnsBothImages(t *testing.T) {
	imgs := shared.get(t)
	var got []string
	for _, img := range imgs {
		got = append(got, img.Name)
		if _, err := os.Stat(img.Tarball); err != nil {
			t.Errorf("tarball of %s: %v", img.Name, err)
		}
	}
	want := []string{PauseName, StressName}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("BuildAll names = %v, want %v", got, want)
	}
}
