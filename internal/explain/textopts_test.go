package explain

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWrapBreaksAtSpacesAndKeepsLongWords(t *testing.T) {
	for _, tc := range []struct {
		name  string
		text  string
		width int
		want  []string
	}{
		{"no width keeps one line", "a b c", 0, []string{"a b c"}},
		{"a short text stays whole", "short enough", 40, []string{"short enough"}},
		{"breaks at the last space that fits", "aaaa bbbb cccc dddd eeee ffff gggg", 20,
			[]string{"aaaa bbbb cccc dddd", "eeee ffff gggg"}},
		{"a word longer than the width stays whole", "x " + strings.Repeat("y", 30) + " z", 20,
			[]string{"x", strings.Repeat("y", 30), "z"}},
		{"a width too small to read is ignored", "aaaa bbbb cccc", 5, []string{"aaaa bbbb cccc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(wrap(tc.text, tc.width), tc.want); diff != "" {
				t.Errorf("wrap(%q, %d) (-got +want):\n%s", tc.text, tc.width, diff)
			}
		})
	}
}

func TestColourOnlyWhenAsked(t *testing.T) {
	r := Report{Node: "n", Warnings: []string{"something odd"}, Unavailable: []string{"the kubelet did not answer"}}
	var plain, colour strings.Builder
	if err := Text(&plain, r); err != nil {
		t.Fatal(err)
	}
	if err := TextWith(&colour, r, TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Errorf("Text wrote ANSI escapes:\n%q", plain.String())
	}
	for _, want := range []string{ansiYellow + "WARNING:" + ansiReset, ansiRed + "PARTIAL", ansiBold + "ALLOCATABLE"} {
		if !strings.Contains(colour.String(), want) {
			t.Errorf("coloured text lacks %q:\n%q", want, colour.String())
		}
	}
}
