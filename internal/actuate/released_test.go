package actuate

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestReleased(t *testing.T) {
	now := metav1.Now()
	pod := func(uid string, terminating bool) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}
		if terminating {
			p.DeletionTimestamp = &now
		}
		return p
	}
	pods := []*v1.Pod{pod("a", true), pod("b", false), pod("c", true), pod("d", true), nil}
	usage := map[types.UID]int64{"a": 100 << 20, "b": 500 << 20, "c": 50 << 20, "e": 1 << 30}
	if got, want := Released(pods, usage), int64(150<<20); got != want {
		t.Errorf("Released = %d, want %d (terminating a and c; d has no usage, b is running)", got, want)
	}
	if got := Released(nil, usage); got != 0 {
		t.Errorf("Released(no pods) = %d, want 0", got)
	}
}
