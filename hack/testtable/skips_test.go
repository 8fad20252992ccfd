package main

import "testing"

func TestASkipsReasonIsTheLastLineItPrintedWithoutItsLocation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		test  string
		lines []line
		want  string
	}{
		{"t.Skip's message, after the test's own log", "TestA", []line{
			{"TestA", "=== RUN   TestA\n"}, {"TestA", "    a_test.go:10: control plane ready\n"},
			{"TestA", "    a_test.go:12: skipping kube-apiserver 1.34: not built\n"}, {"TestA", "--- SKIP: TestA (0.00s)\n"}},
			"skipping kube-apiserver 1.34: not built"},
		{"a subtest's own reason, not its parent's or a sibling's", "TestA/x", []line{
			{"TestA", "    a_test.go:5: parent says\n"}, {"TestA/x", "    a_test.go:7: x has no cgroup v2\n"},
			{"TestA/y", "    a_test.go:9: y ran\n"}, {"TestA/x", "    --- SKIP: TestA/x (0.00s)\n"}},
			"x has no cgroup v2"},
		{"a message without a location is kept whole", "TestA", []line{{"TestA", "not root: the real cgroup tests need it\n"}},
			"not root: the real cgroup tests need it"},
		{"nothing printed", "TestA", []line{{"TestA", "=== RUN   TestA\n"}, {"TestA", "--- SKIP: TestA (0.00s)\n"}},
			"(no reason printed)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &heldOutput{lines: tc.lines}
			if got := h.reason(tc.test); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
