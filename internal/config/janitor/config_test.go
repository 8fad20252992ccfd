package janitor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/kube-pressure/pressure/internal/config/configfile"
)

func load(t *testing.T, path string) (*JanitorConfiguration, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open fixture: %v", err)
	}
	defer f.Close()
	return Load(f, path)
}

func resolveFile(t *testing.T, path string) (Config, error) {
	t.Helper()
	c, err := load(t, path)
	if err != nil {
		return Config{}, err
	}
	SetDefaults(c)
	if err := Validate(c, Origin{File: path}); err != nil {
		return Config{}, err
	}
	return Convert(c), nil
}

func TestMinimalFileGetsEveryDefault(t *testing.T) {
	got, err := resolveFile(t, "testdata/valid-minimal.yaml")
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	want := Config{
		TTL: DefaultTTL, KeepPerOwner: 1, Reasons: []string{"Evicted"}, DeletionsPerSec: 20, Burst: 50, Workers: 4,
		LeaderElection: LeaderElectionConfig{Enabled: true, LeaseName: "pressure-janitor", LeaseNamespace: "kube-system",
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second},
		MetricsAddr: ":8080", HealthProbeAddr: ":8081", AvoidanceWebhook: AvoidanceWebhookConfig{Addr: "0"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Config (-got +want):\n%s", diff)
	}
}

func TestTTLZeroIsKeptNotDefaulted(t *testing.T) {
	got, err := resolveFile(t, "testdata/valid-ttl-zero.yaml")
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	if got.TTL != 0 || got.KeepPerOwner != 0 || got.LeaderElection.Enabled || got.MetricsAddr != "0" || !got.DeleteSucceeded {
		t.Errorf("got ttl %v keep %d leaderElect %v metrics %q deleteSucceeded %v; want 0s 0 false \"0\" true",
			got.TTL, got.KeepPerOwner, got.LeaderElection.Enabled, got.MetricsAddr, got.DeleteSucceeded)
	}
}

// TestDocumentedExampleLoads keeps deploy/examples/janitor-config.yaml (quoted in docs/janitor.md)
// valid.
func TestDocumentedExampleLoads(t *testing.T) {
	got, err := resolveFile(t, filepath.Join("..", "..", "..", "deploy", "examples", "janitor-config.yaml"))
	if err != nil {
		t.Fatalf("resolve example: %v", err)
	}
	if got.TTL != 30*time.Minute || !cmp.Equal(got.ExcludeNamespaces, []string{"kube-system"}) ||
		!cmp.Equal(got.Reasons, []string{"Evicted", "UnexpectedAdmissionError"}) {
		t.Errorf("example: ttl %v exclude %v reasons %v", got.TTL, got.ExcludeNamespaces, got.Reasons)
	}
}

func TestLoadRejects(t *testing.T) {
	tests := []struct {
		file string
		want []string // substrings of the error
	}{
		{"invalid-unknown-field.yaml", []string{"testdata/invalid-unknown-field.yaml", `unknown field "tll"`}},
		{"invalid-kind.yaml", []string{"testdata/invalid-kind.yaml", `kind "KubeletConfiguration"`}},
		{"invalid-bad-duration.yaml", []string{"testdata/invalid-bad-duration.yaml", "5 minutes"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			_, err := load(t, filepath.Join("testdata", tc.file))
			if err == nil {
				t.Fatalf("Load() succeeded; want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load() error %q; want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadRejectsAnotherKindWithSentinel(t *testing.T) {
	_, err := load(t, "testdata/invalid-kind.yaml")
	if !errors.Is(err, ErrNotJanitorConfiguration) {
		t.Errorf("Load() error %v; want errors.Is ErrNotJanitorConfiguration", err)
	}
}

func TestValidateReturnsEveryProblemNamingFileFieldAndValue(t *testing.T) {
	_, err := resolveFile(t, "testdata/invalid-values.yaml")
	if err == nil {
		t.Fatalf("Validate() succeeded; want errors")
	}
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *configfile.FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("problem %v is not a *configfile.FieldError", e)
		}
		if fe.Source != "testdata/invalid-values.yaml" {
			t.Errorf("problem %v: source %q; want the file", fe, fe.Source)
		}
		got = append(got, fe.Field+"="+fmt.Sprint(fe.Value))
	}
	want := []string{
		"ttl=-5m0s", "keepPerOwner=-1", "namespaces[1]=Team_B", "namespaces[0]=team-a", `labelSelector=tier in (web`,
		"rateLimit.deletionsPerSecond=0", "rateLimit.burst=0", "workers=0",
		"leaderElection.leaseDuration=5s", "leaderElection.renewDeadline=10s",
		"metricsBindAddress=localhost:99999", "healthProbeBindAddress=nonsense",
		"avoidanceWebhook.certFile=", "avoidanceWebhook.keyFile=", "avoidanceWebhook.namespace=Pressure",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("problems field=value (-got +want):\n%s", diff)
	}
	if msg := err.Error(); !strings.Contains(msg, `testdata/invalid-values.yaml: field ttl: value "-5m0s": must not be negative`) {
		t.Errorf("error text %q lacks the file: field: value: reason form", msg)
	}
}

func TestFlagsOverrideTheFileAndErrorsNameTheFlag(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	var o Overrides
	o.AddFlags(fs)
	args := []string{"--config", "testdata/valid-ttl-zero.yaml", "--ttl", "-1s", "--keep-per-owner", "3",
		"--namespace", "a,b", "--exclude-namespace", "c", "--dry-run", "--leader-elect=true"}
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse: %v", err)
	}
	_, err := o.Resolve(fs)
	if err == nil || !strings.Contains(err.Error(), `flag --ttl: field ttl: value "-1s"`) {
		t.Fatalf("Resolve() error %v; want it to name flag --ttl", err)
	}
	if err := fs.Set("ttl", "0s"); err != nil {
		t.Fatal(err)
	}
	got, err := o.Resolve(fs)
	if err != nil {
		t.Fatalf("Resolve(): %v", err)
	}
	if got.TTL != 0 || got.KeepPerOwner != 3 || !cmp.Equal(got.Namespaces, []string{"a", "b"}) ||
		!cmp.Equal(got.ExcludeNamespaces, []string{"c"}) || !got.DryRun || !got.LeaderElection.Enabled ||
		!got.DeleteSucceeded {
		t.Errorf("Resolve() = %+v; want flags over file (ttl 0, keep 3, ns a,b, exclude c, dry-run, leader-elect) and file's deleteSucceeded", got)
	}
}

func TestUnsetFlagsDoNotOverrideTheFile(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	var o Overrides
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--config", "testdata/valid-ttl-zero.yaml"}); err != nil {
		t.Fatal(err)
	}
	got, err := o.Resolve(fs)
	if err != nil {
		t.Fatalf("Resolve(): %v", err)
	}
	if got.TTL != 0 || got.LeaderElection.Enabled {
		t.Errorf("ttl %v leaderElect %v; want the file's 0s and false, not the flag defaults", got.TTL, got.LeaderElection.Enabled)
	}
}

func FuzzLoad(f *testing.F) {
	for _, name := range []string{"valid-minimal.yaml", "valid-ttl-zero.yaml", "invalid-values.yaml", "invalid-unknown-field.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("apiVersion: pressure.kube-pressure.io/v1alpha1\nkind: JanitorConfiguration\nttl: 1e400h\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Load(strings.NewReader(string(data)), "fuzz.yaml")
		if err != nil {
			if c != nil {
				t.Errorf("Load() returned a value and an error %v", err)
			}
			return
		}
		if c.APIVersion != APIVersion || c.Kind != Kind {
			t.Errorf("Load() accepted apiVersion %q kind %q", c.APIVersion, c.Kind)
		}
		SetDefaults(c)
		if Validate(c, Origin{File: "fuzz.yaml"}) == nil {
			_ = Convert(c) // must not panic on a valid value
		}
	})
}
