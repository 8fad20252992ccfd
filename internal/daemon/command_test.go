package daemon

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kube-pressure/pressure/internal/config/cmdline"
)

// testCommand is a daemon with one flag of its own, --name, that records what its Run got.
func testCommand(stdout, stderr *bytes.Buffer, ran *string) Command {
	var f cmdline.Flags
	var name string
	return Command{
		Binary: "d", Flags: &f, Stdout: stdout, Stderr: stderr,
		AddFlags: func(fs *pflag.FlagSet) {
			f.AddFlags(fs, cmdline.Usage{Config: "config", DryRun: "dry run"})
			fs.StringVar(&name, "name", "", "a flag of the daemon's own")
		},
		Run: Resolved(func(*pflag.FlagSet) (string, error) {
			if name == "" {
				return "", errors.New("name: required")
			}
			return name + " dry-run=" + map[bool]string{true: "true", false: "false"}[f.DryRun], nil
		}, func(_ context.Context, cfg string, log *slog.Logger) error {
			log.Info("running")
			*ran = cfg
			return nil
		}),
	}
}

func TestMainRunsTheDaemonOnlyWithAResolvedConfiguration(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		wantRan   string
		wantErr   string
		wantOut   string
		wantInLog string
	}{
		{name: "flags reach the daemon's configuration", args: []string{"--name", "x", "--dry-run"}, wantRan: "x dry-run=true",
			wantInLog: `"msg":"running"`},
		{name: "--help runs nothing and is no error", args: []string{"--help"}},
		{name: "--version prints the binary's version and runs nothing", args: []string{"--version"}, wantOut: "d "},
		{name: "a bad configuration runs nothing", args: []string{}, wantErr: "name: required"},
		{name: "a bad log level runs nothing", args: []string{"--name", "x", "--log-level", "loud"}, wantErr: `--log-level "loud"`},
		{name: "an unknown flag runs nothing", args: []string{"--nope"}, wantErr: "unknown flag: --nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			var ran string
			err := testCommand(&stdout, &stderr, &ran).Main(tc.args)
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Main(%v) = %v, want error %q", tc.args, err, tc.wantErr)
			}
			if ran != tc.wantRan {
				t.Errorf("the daemon ran with %q, want %q", ran, tc.wantRan)
			}
			if !strings.HasPrefix(stdout.String(), tc.wantOut) || (tc.wantOut == "" && stdout.Len() > 0) {
				t.Errorf("stdout %q, want it to start with %q", stdout.String(), tc.wantOut)
			}
			if !strings.Contains(stderr.String(), tc.wantInLog) {
				t.Errorf("stderr %q, want it to contain %q", stderr.String(), tc.wantInLog)
			}
		})
	}
}
