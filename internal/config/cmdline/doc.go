// Package cmdline holds the command-line flags pressure-agent and pressure-janitor both take (--config,
// --kubeconfig, --dry-run, --metrics-bind-address, --health-probe-bind-address, --version, --log-level,
// -v, --profiling) and the defaults of the two bind addresses, which are also the configuration files' defaults.
//
// A flag is a way to set a configuration field, so it belongs with the configuration: the daemons'
// configuration packages (internal/config/agent, internal/config/janitor) embed Flags in their
// Overrides and apply the flags the user set over the file; internal/daemon only parses them.
package cmdline
