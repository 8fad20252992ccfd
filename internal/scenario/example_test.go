package scenario_test

import (
	"fmt"
	"strings"

	"github.com/kube-pressure/pressure/internal/scenario"
)

func ExampleParse() {
	s, err := scenario.Parse(strings.NewReader(`
node: {memory: 8Gi}
kubelet: {evictionHard: {memory.available: 500Mi}}
pods:
- {name: leak, usage: {start: 1Gi, rate: 50Mi/s}}
`), "leak.yaml")
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Node, s.Duration, s.Pods[0].Candidate.Name, s.Pods[0].Candidate.QOSClass, s.Pods[0].Usage.Rate>>20, "Mi/s")
	_, err = scenario.Parse(strings.NewReader("node: {memory: 8Gi}\npods:\n- {name: a, usage: {rate: 50Mi}}\n"), "bad.yaml")
	fmt.Println(err)
	// Output:
	// sim-node 5m0s leak BestEffort 50 Mi/s
	// bad.yaml: line 3, column 27: field pods[0].usage.rate: value "50Mi": want a rate like 50Mi/s or 3Gi/m (bytes per /s, /m or /h)
}
