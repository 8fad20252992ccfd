package janitor_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/janitor"
)

func ExampleSelect() {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	pods := []janitor.PodInfo{
		{Namespace: "shop", Name: "web-1", UID: "1", Phase: v1.PodFailed, Reason: "Evicted",
			EvictedAt: now.Add(-time.Hour), Source: janitor.FromDisruptionTarget},
		{Namespace: "shop", Name: "web-2", UID: "2", Phase: v1.PodFailed, Reason: "Evicted",
			EvictedAt: now.Add(-time.Minute), Source: janitor.FromDisruptionTarget},
		{Namespace: "shop", Name: "web-3", UID: "3", Phase: v1.PodRunning},
	}
	policy := janitor.Policy{TTL: 10 * time.Minute, Reasons: []string{"Evicted"}}
	for _, a := range janitor.Select(pods, now, policy) {
		fmt.Println(a.Pod.Name, a.Verb, a.Skip, a.At.Format(time.Kitchen))
	}
	// Output:
	// web-1 Delete  11:10AM
	// web-2 Wait  12:09PM
	// web-3 Skip not_terminal 12:00AM
}
