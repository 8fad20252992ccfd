package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// cliPlatforms reads CLI_PLATFORMS, the os/arch pairs `make dist` builds kubectl-pressure for.
func cliPlatforms(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CLI_PLATFORMS\s*:=\s*(.+)$`).FindSubmatch(raw)
	if m == nil {
		t.Fatal("Makefile: no CLI_PLATFORMS := line")
	}
	return strings.Fields(string(m[1]))
}

// archive is the file name `make dist` gives the kubectl-pressure archive of os/arch.
func archive(version, os, arch string) string {
	ext := "tar.gz"
	if os == "windows" {
		ext = "zip"
	}
	return fmt.Sprintf("kubectl-pressure_%s_%s_%s.%s", version, os, arch, ext)
}

type krewPlatform struct {
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	}
	URI    string
	Sha256 string
	Bin    string
	Files  []struct{ From, To string }
}

// TestKrewManifestTemplateListsEveryDistPlatform fills in the placeholders the way `make dist` does
// and checks the result is a krew Plugin whose platforms are CLI_PLATFORMS, each naming the archive
// `make dist` writes and installing kubectl-pressure (kubectl-pressure.exe on windows), the LICENSE and,
// but on windows, the completion hook kubectl_complete-pressure.
func TestKrewManifestTemplateListsEveryDistPlatform(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "krew", "pressure.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(l, "#") { // make dist drops the template's comment
			lines = append(lines, l)
		}
	}
	platforms := cliPlatforms(t)
	repl := []string{"@VERSION@", "v1.2.3"}
	for i, p := range platforms {
		os, arch, _ := strings.Cut(p, "/")
		repl = append(repl, "@SHA256_"+strings.ToUpper(os)+"_"+strings.ToUpper(arch)+"@", strings.Repeat(string(rune('a'+i)), 64))
	}
	filled := strings.NewReplacer(repl...).Replace(strings.Join(lines, "\n"))
	if strings.Contains(filled, "@") {
		t.Errorf("placeholders left after filling: %q", filled[strings.Index(filled, "@"):][:40])
	}
	var p struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct{ Name string }
		Spec       struct {
			Version          string
			Homepage         string
			ShortDescription string `json:"shortDescription"`
			Description      string
			Caveats          string
			Platforms        []krewPlatform
		}
	}
	if err := yaml.UnmarshalStrict([]byte(filled), &p, yaml.DisallowUnknownFields); err != nil {
		t.Fatalf("krew manifest: %v", err)
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" || p.Metadata.Name != "pressure" ||
		p.Spec.Version != "v1.2.3" || p.Spec.ShortDescription == "" {
		t.Errorf("manifest header: %+v", p)
	}
	var got []string
	for _, pl := range p.Spec.Platforms {
		got = append(got, checkKrewPlatform(t, pl))
	}
	if !slices.Equal(got, platforms) {
		t.Errorf("platforms %v, want the Makefile's CLI_PLATFORMS %v", got, platforms)
	}
}

// checkKrewPlatform checks one platform entry and returns its os/arch.
func checkKrewPlatform(t *testing.T, pl krewPlatform) string {
	t.Helper()
	os, arch := pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]
	bin := "kubectl-pressure"
	if os == "windows" {
		bin += ".exe"
	}
	if want := archive("v1.2.3", os, arch); !strings.HasSuffix(pl.URI, "/v1.2.3/"+want) {
		t.Errorf("%s/%s: uri %s, want the make dist archive %s", os, arch, pl.URI, want)
	}
	if len(pl.Sha256) != 64 || pl.Bin != bin {
		t.Errorf("%s/%s: sha256 %q bin %q, want bin %q", os, arch, pl.Sha256, pl.Bin, bin)
	}
	var from []string
	for _, f := range pl.Files {
		from = append(from, f.From)
	}
	if !slices.Contains(from, bin) || !slices.Contains(from, "LICENSE") {
		t.Errorf("%s/%s: files %v do not install %s and LICENSE", os, arch, from, bin)
	}
	if complete := slices.Contains(from, "kubectl_complete-pressure"); complete != (os != "windows") {
		t.Errorf("%s/%s: files %v: installs kubectl_complete-pressure %v, want it on every platform but windows", os, arch, from, complete)
	}
	return os + "/" + arch
}

// TestKubectlPressureCrossCompilesForEveryDistPlatform builds kubectl-pressure for each of
// CLI_PLATFORMS (darwin and windows have no cgroups or Linux statfs: --local is build-tagged).
func TestKubectlPressureCrossCompilesForEveryDistPlatform(t *testing.T) {
	root := repoRoot(t)
	for _, p := range cliPlatforms(t) {
		t.Run(strings.ReplaceAll(p, "/", "-"), func(t *testing.T) {
			goos, goarch, _ := strings.Cut(p, "/")
			cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(t.TempDir(), "kubectl-pressure"), "./cmd/kubectl-pressure")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("GOOS=%s GOARCH=%s go build ./cmd/kubectl-pressure: %v\n%s", goos, goarch, err, out)
			}
		})
	}
}
