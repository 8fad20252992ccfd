// Package daemon is the plumbing pressure-agent and pressure-janitor share, so that it is written once:
//
//   - Command: a daemon's main: parse the flags (the common ones are internal/config/cmdline's, since
//     each sets a configuration field), --help, --version, logging (internal/logging), and a context that
//     ends on SIGINT or SIGTERM.
//   - RESTConfig and Client: the REST configuration from a kubeconfig or in-cluster, and the client's
//     rate limit, user agent and content type.
//   - Serve, MetricsHandler and NewRegistry: the HTTP servers of /metrics and the probes, their graceful
//     shutdown, and the default Prometheus registry.
//
// What each daemon decides, and its probes' meaning, stay in its own package (internal/agent,
// internal/janitor); this package holds no state of its own.
package daemon
