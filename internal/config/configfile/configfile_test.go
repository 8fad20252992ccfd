package configfile

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type testConfig struct {
	metav1.TypeMeta `json:",inline"`
	Name            *string `json:"name,omitempty"`
}

var errWrong = errors.New("not a TestConfiguration")

var kind = Kind{APIVersion: "test.example/v1", Kind: "TestConfiguration", Wrong: errWrong}

func TestDecodeIsStrictAndNamesTheFile(t *testing.T) {
	head := "apiVersion: test.example/v1\nkind: TestConfiguration\n"
	for _, tc := range []struct {
		name, body, want string
		is               error
	}{
		{"unknown field", head + "nmae: x\n", `f.yaml: decode: error unmarshaling JSON: while decoding JSON: json: unknown field "nmae"`, nil},
		{"duplicate field", head + "name: a\nname: b\n", `f.yaml: decode: error converting YAML to JSON: yaml: unmarshal errors:`, nil},
		{"another kind", "apiVersion: test.example/v1\nkind: Other\n", `f.yaml: apiVersion "test.example/v1" kind "Other": not a TestConfiguration`, errWrong},
		{"too large", head + "name: " + strings.Repeat("x", MaxFileBytes) + "\n", "f.yaml: larger than 1048576 bytes", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode[testConfig](strings.NewReader(tc.body), "f.yaml", kind)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want one starting %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v does not wrap %v", err, tc.is)
			}
		})
	}
	c, err := Decode[testConfig](strings.NewReader(head+"name: ok\n"), "f.yaml", kind)
	if err != nil || *c.Name != "ok" {
		t.Errorf("Decode = %+v, %v; want name ok", c, err)
	}
}

func TestValidatorReturnsEveryProblemWithItsSource(t *testing.T) {
	v := Validator{Source: func(field string) string {
		if field == "b" {
			return "flag --b"
		}
		return "f.yaml"
	}}
	v.Check(false, "a", 1, "too small")
	v.Check(true, "ok", 2, "never reported")
	v.Check(false, "b", "x", "bad")
	v.Address("addr", "localhost:99999", false)
	v.Address("off", "0", false)
	v.Address("empty", "", true)
	var got []string
	for _, e := range v.Err().(interface{ Unwrap() []error }).Unwrap() {
		got = append(got, e.Error())
	}
	want := []string{`f.yaml: field a: value "1": too small`, `flag --b: field b: value "x": bad`,
		`f.yaml: field addr: value "localhost:99999": must be host:port, :port or "0" to disable: port 99999 out of range`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func FuzzDecode(f *testing.F) {
	f.Add("apiVersion: test.example/v1\nkind: TestConfiguration\nname: x\n")
	f.Add("{\"apiVersion\":\"test.example/v1\",\"kind\":\"TestConfiguration\"}")
	f.Add("name: [")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Decode[testConfig](strings.NewReader(s), "f", kind)
		if (c == nil) == (err == nil) {
			t.Fatalf("Decode(%q) = %v, %v: want exactly one of a value and an error", s, c, err)
		}
	})
}
