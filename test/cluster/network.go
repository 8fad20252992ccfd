package cluster

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// cniNetworkName names our CNI network (host-local and libcni state are keyed by it).
const cniNetworkName = "pressure"

// setupNetwork creates the bridge with the gateway address (the kubelet serves there before any
// pod exists) and writes the CNI config: bridge + host-local on subnet, the bridge as pods'
// default gateway, no masquerade (pods reach the node and, through APIRoute, the API server;
// nothing beyond the node).
func setupNetwork(opts NodeOptions, subnet *net.IPNet, gw net.IP) error {
	ones, _ := subnet.Mask.Size()
	steps := [][]string{
		{"link", "add", opts.Bridge, "type", "bridge"},
		{"addr", "add", fmt.Sprintf("%s/%d", gw, ones), "dev", opts.Bridge},
		{"link", "set", opts.Bridge, "up"},
	}
	for _, args := range steps {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       cniNetworkName,
		"plugins": []any{
			map[string]any{
				"type":      "bridge",
				"bridge":    opts.Bridge,
				"isGateway": true,
				// A default route via the bridge: pods reach the kubernetes Service IP, which
				// APIRoute sends to the API server.
				"isDefaultGateway": true,
				"ipMasq":           false,
				"hairpinMode":      true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  [][]map[string]string{{{"subnet": subnet.String(), "gateway": gw.String()}}},
					"dataDir": filepath.Join(opts.Dir, "cni", "ipam"),
				},
			},
		},
	}
	data, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return fmt.Errorf("encode cni config: %w", err)
	}
	dir := filepath.Join(opts.Dir, "cni", "net.d")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cni config dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "10-pressure.conflist"), data, 0o644); err != nil {
		return fmt.Errorf("write cni config: %w", err)
	}
	return nil
}
