package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestKrewManifestTemplateIsAPluginForLinuxAmd64AndArm64 fills in the placeholders the way
// `make dist` does and checks the result is a krew Plugin whose platforms name the archives
// `make dist` writes and install kubectl-pressure.
func TestKrewManifestTemplateIsAPluginForLinuxAmd64AndArm64(t *testing.T) {
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
	filled := strings.NewReplacer("@VERSION@", "v1.2.3",
		"@SHA256_LINUX_AMD64@", strings.Repeat("a", 64), "@SHA256_LINUX_ARM64@", strings.Repeat("b", 64)).Replace(strings.Join(lines, "\n"))
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
			Platforms        []struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				}
				URI    string
				Sha256 string
				Bin    string
				Files  []struct{ From, To string }
			}
		}
	}
	if err := yaml.UnmarshalStrict([]byte(filled), &p, yaml.DisallowUnknownFields); err != nil {
		t.Fatalf("krew manifest: %v", err)
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" || p.Metadata.Name != "pressure" ||
		p.Spec.Version != "v1.2.3" || p.Spec.ShortDescription == "" {
		t.Errorf("manifest header: %+v", p)
	}
	var arches []string
	for _, pl := range p.Spec.Platforms {
		arch := pl.Selector.MatchLabels["arch"]
		arches = append(arches, pl.Selector.MatchLabels["os"]+"/"+arch)
		if want := "kubectl-pressure_v1.2.3_linux_" + arch + ".tar.gz"; !strings.HasSuffix(pl.URI, "/v1.2.3/"+want) {
			t.Errorf("%s: uri %s, want the make dist archive %s", arch, pl.URI, want)
		}
		if len(pl.Sha256) != 64 || pl.Bin != "kubectl-pressure" {
			t.Errorf("%s: sha256 %q bin %q", arch, pl.Sha256, pl.Bin)
		}
		var from []string
		for _, f := range pl.Files {
			from = append(from, f.From)
		}
		if !slices.Contains(from, "kubectl-pressure") {
			t.Errorf("%s: files %v do not install kubectl-pressure", arch, from)
		}
	}
	if !slices.Equal(arches, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("platforms %v, want linux/amd64 and linux/arm64", arches)
	}
}
