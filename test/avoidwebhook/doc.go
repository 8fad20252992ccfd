// Package avoidwebhook tests the per-workload avoidance's fallback for clusters without
// MutatingAdmissionPolicy v1 (issue 29) end to end on a real Kubernetes 1.34 control plane: the
// kube-apiserver and kube-scheduler of v1.34 (built by hack/build-apiserver.sh from test/tools), the
// chart's MutatingWebhookConfiguration and certificate as helm renders them for 1.34, and the webhook
// served by the janitor (janitor.RunWithOptions) in the test process.
//
// The API server reaches the webhook through the chart's Service reference (so it checks the chart's
// certificate against the chart's caBundle under the name <service>.<namespace>.svc): it runs with
// --enable-aggregator-routing, which resolves a Service to one of its EndpointSlice endpoints instead
// of the cluster IP (there is no kube-proxy), and the test writes an EndpointSlice holding this
// machine's own address. Not 127.0.0.1: EndpointSlice validation refuses loopback addresses, and a
// URL webhook on 127.0.0.1 would need a certificate for that IP, which the chart's does not name.
// The package has only tests.
package avoidwebhook
