package soak

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// keepLogs copies the logs of the release's pods (the agent's and the janitor's containers, every
// file, restarted containers' too) from the node into dir/logs/<namespace_pod_uid>/<container>/. It is
// called before a fault and at the end of each episode: a deleted agent pod's logs go with the pod, and
// a failing episode must keep the evidence of what the agent did. A file copied earlier is overwritten
// by its longer self.
func (c *soakCluster) keepLogs(dir string) error {
	root := c.node.PodLogsDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("keep logs: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), releaseNS+"_") {
			continue
		}
		src := filepath.Join(root, e.Name())
		err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			dst := filepath.Join(dir, "logs", rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o644)
		})
		if err != nil {
			return fmt.Errorf("keep logs of %s: %w", e.Name(), err)
		}
	}
	return nil
}
