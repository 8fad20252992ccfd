package differential

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/kubeconv"
)

// release is one Kubernetes release whose unmodified eviction manager the core is compared with.
// A Go module requires one k8s.io/kubernetes version, so each release's oracle is built from its own
// module: the pinned release from test/tools (which the test cluster's binaries are built from, so a
// warm Go build cache serves its kubelet packages), the others from test/tools/oracle/v1.MINOR, whose
// .go files are symlinks to test/tools/cmd/kubelet-eviction-oracle. The kubelet API differences are in
// build-tagged adapters there (Start without a context in 1.34, admission attributes without
// Operation in 1.34 and 1.35, Admit without a context before 1.37).
type release struct {
	Version string // the k8s.io/kubernetes version the module requires
	Minor   int    // decision.Semantics.Minor of that release
	Module  string // the module's directory, relative to test/tools
	Pkg     string // the oracle's package, relative to the module
	Tag     string // the build tag of the release's adapters ("" = none)
}

// releases are the supported kubelet releases, oldest first (decision.OldestMinor..NewestMinor).
var releases = []release{
	{Version: "v1.34.4", Minor: 34, Module: "oracle/v1.34", Pkg: ".", Tag: "oracle_k134"},
	{Version: "v1.35.4", Minor: 35, Module: "oracle/v1.35", Pkg: ".", Tag: "oracle_k135"},
	{Version: "v1.36.3", Minor: 36, Module: "oracle/v1.36", Pkg: ".", Tag: "oracle_k136"},
	{Version: "v1.37.2", Minor: 37, Module: ".", Pkg: "./cmd/kubelet-eviction-oracle"},
}

func (r release) tags() []string {
	if r.Tag == "" {
		return nil
	}
	return []string{r.Tag}
}

// semanticsFor is the core's semantics for a case run against rel: the release's version and the
// feature gates of the case's KubeletConfiguration (what /configz serves), resolved by the code that
// explain, simulate and the agent use. checkReleases checks that each release resolves to its minor.
func semanticsFor(rel release, kc kubeconv.KubeletConfig) decision.Semantics {
	return kc.Semantics(rel.Version)
}

// checkReleases fails when the releases do not cover decision.OldestMinor..NewestMinor in order, or
// a release's version does not resolve, without a warning, to its minor.
func checkReleases(t *testing.T) {
	t.Helper()
	var minors []int
	for _, r := range releases {
		minors = append(minors, r.Minor)
		if s := decision.ResolveSemantics(r.Version); s.Minor != r.Minor || s.Warning != "" {
			t.Errorf("release %s resolves to %s (warning %q), want minor %d", r.Version, s, s.Warning, r.Minor)
		}
	}
	var want []int
	for m := decision.OldestMinor; m <= decision.NewestMinor; m++ {
		want = append(want, m)
	}
	if !slices.Equal(minors, want) {
		t.Errorf("releases cover minors %v, the core supports %v: add or drop an oracle module", minors, want)
	}
}

// allReleases, as -releases (or PRESSURE_DIFFERENTIAL_RELEASES), compares with every release, building
// the oracles that are not cached (make test-versions).
const allReleases = "all"

// selectedReleases are the releases -releases names. Without it: the pinned release (its oracle links
// the kubelet packages the test cluster's binaries left in the Go build cache) and every other release
// whose oracle is cached. A cold build of one of those takes 6 to 12 minutes of CPU (issue 29's
// measurements), three of them would push a fresh machine's make test past CI's 90 minutes, so make
// test leaves them to make test-versions and says so; once built they run in every make test.
func selectedReleases(t *testing.T) []release {
	t.Helper()
	if *only == allReleases {
		return releases
	}
	if *only == "" {
		var out []release
		for _, r := range releases {
			if _, built := oraclePath(t, r); built || r.Module == "." {
				out = append(out, r)
				continue
			}
			t.Logf("kubelet %s: its oracle is not built, not compared in this run (make test-versions builds "+
				"every release's oracle once, then make test compares with it too)", r.Version)
		}
		return out
	}
	var out []release
	for _, v := range strings.Split(*only, ",") {
		i := slices.IndexFunc(releases, func(r release) bool { return r.Version == strings.TrimSpace(v) })
		if i < 0 {
			t.Fatalf("-releases: unknown release %q (supported: %v)", v, releases)
		}
		out = append(out, releases[i])
	}
	return out
}

// recordOutcomes keeps, per version family, the kubelet's evictions (case, step, pod, grace, message)
// on rel, and logs how many each family had.
func recordOutcomes(t *testing.T, outcomes map[string]map[string]string, rel release, cases []Case, results []Result) {
	t.Helper()
	counts := map[string]int{}
	for i := range cases {
		fam := familyOf(cases[i].Name)
		if fam == "" {
			continue
		}
		if outcomes[fam] == nil {
			outcomes[fam] = map[string]string{}
		}
		var b strings.Builder
		if e := results[i].ConfigError; e != "" {
			fmt.Fprintf(&b, "%s config error %s\n", cases[i].Name, e)
		}
		for j, sr := range results[i].Steps {
			for _, e := range sr.Evictions {
				counts[fam]++
				g := int64(-1)
				if e.GracePeriodOverride != nil {
					g = *e.GracePeriodOverride
				}
				fmt.Fprintf(&b, "%s/%d %s grace %d %s\n", strings.TrimPrefix(cases[i].Name, fam), j, e.UID, g, e.Message)
			}
		}
		outcomes[fam][rel.Version] += b.String()
	}
	names := make([]string, 0, len(counts))
	for _, f := range versionFamilies {
		if _, ok := outcomes[f.name][rel.Version]; ok {
			names = append(names, fmt.Sprintf("%s %d", f.name, counts[f.name]))
		}
	}
	t.Logf("kubelet %s: evictions per version family: %s", rel.Version, strings.Join(names, ", "))
}

// familyOf is the version family of a case name ("" for the random cases).
func familyOf(name string) string {
	for _, f := range versionFamilies {
		if rest, ok := strings.CutPrefix(name, f.name+"-"); ok && len(rest) == 3 {
			return f.name
		}
	}
	return ""
}

// checkFamilyDifferences requires each listed difference to show in the kubelets' own answers (the
// core agreeing with each release is checked case by case): a family that no longer separates the
// releases or gate settings would pass without testing the difference.
func checkFamilyDifferences(t *testing.T, outcomes map[string]map[string]string, ran map[string]bool) {
	t.Helper()
	for _, d := range familyDifferences {
		if !ran[d.relA] || !ran[d.relB] {
			t.Logf("%s: not checked (kubelet %s or %s not run)", d.what, d.relA, d.relB)
			continue
		}
		a, b := outcomes[d.famA][d.relA], outcomes[d.famB][d.relB]
		if a == b {
			t.Errorf("%s: the kubelets evicted the same in %s on %s and %s on %s: the family does not exercise the difference",
				d.what, d.famA, d.relA, d.famB, d.relB)
			continue
		}
		t.Logf("%s: the kubelets differ (%d vs %d eviction lines)", d.what, strings.Count(a, "\n"), strings.Count(b, "\n"))
	}
}
