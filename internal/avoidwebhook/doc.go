// Package avoidwebhook is the per-workload avoidance as a mutating admission webhook, for API servers
// without MutatingAdmissionPolicy v1 (Kubernetes 1.34 and 1.35). It applies what the chart's
// MutatingAdmissionPolicy (deploy/helm/pressure/templates/agent-avoidance.yaml) applies, from the same
// parameters: the avoidance ConfigMaps the agents write (loopbreaker.AvoidanceParams), one per node.
//
//   - Patch is the policy's matchConditions and JSON patch in Go, pure: a new, unbound pod whose
//     controller (not a DaemonSet) is listed in a node's ConfigMap, created before the avoidance ends
//     (the request's time is the pod's managedFields' as in the policy), gets "metadata.name NotIn
//     [node]" in every required node selector term.
//   - Params keeps the ConfigMaps in an informer (one namespace, the avoidance label).
//   - Handler answers AdmissionReview v1 requests; Serve serves it over TLS with the certificate and
//     key read from files (a mounted Secret, re-read when they change) until its context is done.
//
// The janitor's replicas serve it (internal/janitor); the chart registers it with failurePolicy Ignore,
// so a webhook that is down or slow never stops a pod from being created.
package avoidwebhook
