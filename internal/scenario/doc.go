// Package scenario reads the scenario files of kubectl pressure simulate: a node (memory, the working
// set outside the pods), the kubelet's configuration (a KubeletConfiguration), optionally the agent's
// (an AgentConfiguration), the model's timing and the pods with their requests, limits, priority, owner
// (pods[].owner: the workload, for the agent's avoidances) and usage ramps. Parse(io.Reader, name)
// returns a Scenario, or every problem found, each a *fileerr.Error naming the file, the line and
// column, the field's path and the value. Scenario.Model turns it into a sim.Model for the kubelet
// configuration in force (what-if flags may change it after parsing), and Scenario.Locate names the
// line of the kubelet setting threshold.ParseConfig refused. The format is documented in
// docs/simulate.md, whose example is testdata/example.yaml.
package scenario
