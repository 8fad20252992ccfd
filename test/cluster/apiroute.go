package cluster

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
)

// APIRoute makes the API server, which listens on 127.0.0.1 only and advertises 127.0.0.1 as the
// `kubernetes` Service endpoint, reachable from pods: the test cluster has no kube-proxy. Pods get
// a default route to the bridge (CNI isDefaultGateway), and a nat PREROUTING rule on the bridge
// sends ServiceIP:443 (what in-cluster clients use, KUBERNETES_SERVICE_HOST) to the API server
// on 127.0.0.1, which route_localnet on that bridge allows. The serving certificate holds
// ServiceIP (see newControlPlanePKI). Remove undoes it; both are idempotent.
type APIRoute struct {
	Bridge    string `json:"bridge"`
	ServiceIP string `json:"serviceIP"`
	// Target is the API server's host:port (127.0.0.1:<port>).
	Target string `json:"target"`
}

// newAPIRoute derives the route for a control plane serving at server with the given Service
// range (empty: the harness default 10.0.0.0/24).
func newAPIRoute(bridge, server, serviceRange string) (APIRoute, error) {
	u, err := url.Parse(server)
	if err != nil {
		return APIRoute{}, fmt.Errorf("api route: server %q: %w", server, err)
	}
	ip, err := kubernetesServiceIP(serviceRange)
	if err != nil {
		return APIRoute{}, fmt.Errorf("api route: %w", err)
	}
	return APIRoute{Bridge: bridge, ServiceIP: ip.String(), Target: u.Host}, nil
}

// kubernetesServiceIP is the first address of the Service range: the ClusterIP the API server
// gives the `kubernetes` Service.
func kubernetesServiceIP(serviceRange string) (net.IP, error) {
	if serviceRange == "" {
		serviceRange = defaultServiceClusterIPRange
	}
	_, n, err := net.ParseCIDR(serviceRange)
	if err != nil {
		return nil, fmt.Errorf("service range %q: %w", serviceRange, err)
	}
	ip4 := n.IP.To4()
	if ip4 == nil {
		return nil, fmt.Errorf("service range %q: not IPv4", serviceRange)
	}
	return gatewayIP(n), nil
}

// rule is the iptables nat PREROUTING rule specification (without -A/-D).
func (r APIRoute) rule() []string {
	return []string{"PREROUTING", "-i", r.Bridge, "-d", r.ServiceIP + "/32", "-p", "tcp", "--dport", "443",
		"-m", "comment", "--comment", "pressure test cluster: kubernetes Service to API server",
		"-j", "DNAT", "--to-destination", r.Target}
}

func (r APIRoute) localnetPath() string {
	return "/proc/sys/net/ipv4/conf/" + r.Bridge + "/route_localnet"
}

// Install enables route_localnet on the bridge and adds the DNAT rule (once).
func (r APIRoute) Install() error {
	if err := os.WriteFile(r.localnetPath(), []byte("1"), 0o644); err != nil {
		return fmt.Errorf("api route: allow DNAT to loopback from %s: %w", r.Bridge, err)
	}
	if iptables("-t", "nat", "-C", r.rule()...) == nil {
		return nil
	}
	if err := iptables("-t", "nat", "-A", r.rule()...); err != nil {
		return fmt.Errorf("api route: %w", err)
	}
	return nil
}

// Remove deletes every copy of the DNAT rule; route_localnet goes with the bridge.
func (r APIRoute) Remove() error {
	if r.Bridge == "" || r.ServiceIP == "" || r.Target == "" {
		return nil
	}
	for range 10 {
		if iptables("-t", "nat", "-C", r.rule()...) != nil {
			return nil
		}
		if err := iptables("-t", "nat", "-D", r.rule()...); err != nil {
			return fmt.Errorf("api route: %w", err)
		}
	}
	return errors.New("api route: rule still present after 10 deletions")
}

func iptables(table, name, op string, rule ...string) error {
	args := append([]string{"-w", table, name, op}, rule...)
	if out, err := exec.Command("iptables", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
