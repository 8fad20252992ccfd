package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	kjson "sigs.k8s.io/json"
	sigsyaml "sigs.k8s.io/yaml"

	configagent "github.com/kube-pressure/pressure/internal/config/agent"
	"github.com/kube-pressure/pressure/internal/fileerr"
	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// maxNodes bounds the YAML nodes a configuration section expands to (aliases included).
const maxNodes = 10000

// kubelet parses the kubelet section as a KubeletConfiguration file. Every field is decoded on its
// own first, so that a wrong value is reported at its line; unknown fields are errors.
func (d *doc) kubelet(n *yaml.Node) kubeconv.KubeletConfig {
	empty := kubeconv.KubeletConfig{Config: &kubeletconfigv1beta1.KubeletConfiguration{}}
	if n == nil {
		return empty
	}
	errs := len(d.errs)
	d.fields("kubelet", n, JSONFields(kubeletconfigv1beta1.KubeletConfiguration{}), func(js []byte) error {
		var probe kubeletconfigv1beta1.KubeletConfiguration
		strict, err := kjson.UnmarshalStrict(js, &probe)
		if err == nil && len(strict) > 0 {
			err = strict[0]
		}
		return err
	})
	if len(d.errs) > errs {
		return empty
	}
	js, err := d.sectionJSON("kubelet", n)
	if err != nil {
		return empty
	}
	kc, err := kubeconv.LoadKubeletConfig(bytes.NewReader(js), d.file+": kubelet")
	if err != nil {
		d.fail("kubelet", n, "%v", err)
		return empty
	}
	return kc
}

// agent parses the agent section as an AgentConfiguration (apiVersion and kind may be left out).
func (d *doc) agent(n *yaml.Node) *configagent.AgentConfiguration {
	errs := len(d.errs)
	d.fields("agent", n, JSONFields(configagent.AgentConfiguration{}), func(js []byte) error {
		var probe configagent.AgentConfiguration
		return sigsyaml.UnmarshalStrict(js, &probe)
	})
	if len(d.errs) > errs {
		return nil
	}
	js, err := d.sectionJSON("agent", n)
	if err != nil {
		return nil
	}
	var c configagent.AgentConfiguration
	if err := sigsyaml.UnmarshalStrict(js, &c); err != nil {
		d.fail("agent", n, "%v", cleanJSONError(err))
		return nil
	}
	c.APIVersion, c.Kind = configagent.APIVersion, configagent.Kind
	return &c
}

// fields checks a configuration section field by field, so that a wrong value is reported at its own
// line: each known field alone, as JSON, goes through decode; unknown fields are errors.
func (d *doc) fields(section string, n *yaml.Node, known []string, decode func(js []byte) error) {
	f := d.mapping(section, n, known...)
	for _, key := range sortedKeys(f) {
		js, err := d.sectionJSON(section+"."+key, single(key, f[key]))
		if err != nil {
			continue
		}
		if err := decode(js); err != nil {
			d.fail(section+"."+key, f[key], "%v", cleanJSONError(err))
		}
	}
}

// sectionJSON converts a YAML node (aliases expanded, at most maxNodes nodes) to JSON.
func (d *doc) sectionJSON(path string, n *yaml.Node) ([]byte, error) {
	budget := maxNodes
	x, err := expand(n, &budget)
	if err == nil {
		var y []byte
		if y, err = yaml.Marshal(x); err == nil {
			var js []byte
			if js, err = sigsyaml.YAMLToJSON(y); err == nil {
				return js, nil
			}
		}
	}
	d.fail(path, n, "%v", err)
	return nil, err
}

var errTooLarge = fmt.Errorf("more than %d YAML nodes once aliases are expanded", maxNodes)

// expand copies n with every alias replaced by what it points to, within budget nodes.
func expand(n *yaml.Node, budget *int) (*yaml.Node, error) {
	n = resolve(n)
	if *budget--; *budget < 0 {
		return nil, errTooLarge
	}
	out := *n
	out.Anchor, out.Content = "", nil
	for _, c := range n.Content {
		x, err := expand(c, budget)
		if err != nil {
			return nil, err
		}
		out.Content = append(out.Content, x)
	}
	return &out, nil
}

// single wraps one key and value into a mapping node.
func single(key string, v *yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map",
		Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v}}
}

// cleanJSONError drops the Go type names of a decoding error ("json: cannot unmarshal string into Go
// struct field KubeletConfiguration.evictionMaxPodGracePeriod of type int32").
func cleanJSONError(err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error unmarshaling JSON: while decoding JSON: ")
	return errors.New(msg)
}

// JSONFields returns the JSON names of a struct's fields, inline structs flattened, sorted.
func JSONFields(v any) []string {
	var out []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case strings.Contains(opts, "inline") || f.Anonymous && name == "":
				walk(f.Type)
			case name != "" && name != "-":
				out = append(out, name)
			}
		}
	}
	walk(reflect.TypeOf(v))
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]*yaml.Node) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Locate names the line of the scenario's kubelet section each eviction-setting error of err (from
// threshold.ParseConfig) belongs to; other errors are returned prefixed with the file.
func (s *Scenario) Locate(err error) error {
	var out []error
	for _, e := range fileerr.Leaves(err) {
		var se *threshold.SettingError
		if !errors.As(e, &se) {
			out = append(out, fmt.Errorf("%s: kubelet: %w", s.File, e))
			continue
		}
		d := &doc{file: s.File}
		f := d.mapping("kubelet", s.kubeletNode)
		n, field := f[se.Setting], "kubelet."+se.Setting
		if m := d.mapping(field, n); se.Key != "" && m[se.Key] != nil {
			n, field = m[se.Key], field+"."+se.Key
		}
		out = append(out, at(s.File, field, n, se.Err))
	}
	return errors.Join(out...)
}
