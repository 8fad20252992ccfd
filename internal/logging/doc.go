// Package logging builds the one structured logger of pressure-agent and pressure-janitor: JSON
// lines (log/slog) on stderr, at the level of --log-level and -v, with klog (the logging of
// client-go and the other Kubernetes libraries) routed through the same handler, so every line the
// process writes is JSON. Only a daemon's main calls Setup (daemon.Command.Main): klog's configuration is
// process-wide.
package logging
