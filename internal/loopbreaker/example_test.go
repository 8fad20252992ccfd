package loopbreaker_test

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
)

// The avoidance ConfigMap's data: each avoiding owner's UID and the end of its avoidance, in UTC and
// rounded up to the second so that it never ends early.
func ExampleAvoidanceData() {
	end := time.Date(2026, 11, 29, 15, 5, 0, 500_000_000, time.UTC)
	data := loopbreaker.AvoidanceData([]policy.Avoidance{{Owner: policy.Workload{Kind: "Deployment", Name: "web", UID: "uid-web"}, Until: end}})
	fmt.Println(data["uid-web"])
	// Output:
	// 2026-11-29T15:05:01Z
}
