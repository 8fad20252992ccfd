package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"
)

// APIVersion is the apiVersion of every object kubectl-pressure prints as json or yaml (the group of
// the agent's and janitor's configuration files).
const APIVersion = "pressure.kube-pressure.io/v1alpha1"

// The kinds of the objects the subcommands print in json, yaml and the templates.
const (
	KindExplainResult    = "ExplainResult"
	KindNodeList         = "NodeList"
	KindSnapshotResult   = "SnapshotResult"
	KindRecording        = "Recording"
	KindSimulationResult = "SimulationResult"
	KindWhyResult        = "WhyResult"
	KindVersion          = "Version"
)

// Output formats: every subcommand accepts all of them.
const (
	OutputText = "text"
	OutputWide = "wide"
	OutputJSON = "json"
	OutputYAML = "yaml"
)

// outputSet names the accepted -o values, for the flag's help and its errors.
const outputSet = "text, wide, json, yaml, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, " +
	"go-template=TEMPLATE or go-template-file=FILE"

// templateFormats are the -o formats handed to cli-runtime's printers, as kubectl names them.
var templateFormats = []string{"jsonpath=", "jsonpath-file=", "jsonpath-as-json=", "go-template=", "go-template-file=",
	"template=", "templatefile="}

// isTemplate reports whether output is a jsonpath or go-template format.
func isTemplate(output string) bool {
	for _, f := range templateFormats {
		if strings.HasPrefix(output, f) {
			return true
		}
	}
	return false
}

// isText reports whether output is one of the human formats (text or wide).
func isText(output string) bool { return output == OutputText || output == OutputWide }

// addOutputFlag adds -o/--output with the default text; wide says what wide means for this
// subcommand.
func addOutputFlag(cmd *cobra.Command, p *string, wide string) {
	cmd.Flags().StringVarP(p, "output", "o", OutputText, "output format: text (for people), wide ("+wide+"), "+
		"json or yaml (apiVersion "+APIVersion+"), jsonpath=TEMPLATE or go-template=TEMPLATE (kubectl's printers, "+
		"on the json)")
}

// checkOutput rejects an -o value outside the one set every subcommand accepts.
func checkOutput(output string) error {
	switch {
	case isText(output), output == OutputJSON, output == OutputYAML, isTemplate(output):
		return nil
	case output == "":
		return fmt.Errorf("--output \"\": empty; want one of %s (text is the default)", outputSet)
	}
	return fmt.Errorf("--output %q: unknown format; want one of %s", output, outputSet)
}

// typedJSON encodes v (a struct encoding as a JSON object) with apiVersion and kind first, indented,
// HTML not escaped.
func typedJSON(kind string, v any) ([]byte, error) {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	obj := bytes.TrimSpace(body.Bytes())
	if len(obj) < 2 || obj[0] != '{' {
		return nil, fmt.Errorf("%s: encodes as %.20s, want a JSON object", kind, obj)
	}
	head := fmt.Sprintf(`{"apiVersion":%q,"kind":%q`, APIVersion, kind)
	if !bytes.Equal(obj, []byte("{}")) {
		head += ","
	}
	var out bytes.Buffer
	if err := json.Indent(&out, append([]byte(head), obj[1:]...), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// printObject writes v as kind in a machine format: json (apiVersion and kind first), yaml (the json
// converted: the same content, keys sorted) or a jsonpath/go-template through cli-runtime's printers,
// exactly as kubectl does. The human formats are each subcommand's own.
func printObject(w io.Writer, kind string, v any, output string) error {
	data, err := typedJSON(kind, v)
	if err != nil {
		return err
	}
	switch {
	case output == OutputJSON:
		_, err = w.Write(data)
		return err
	case output == OutputYAML:
		y, err := yaml.JSONToYAML(data)
		if err != nil {
			return err
		}
		_, err = w.Write(y)
		return err
	case isTemplate(output):
		return printTemplate(w, data, output)
	}
	return errors.New("--output " + strconv.Quote(output) + ": not a machine format") // a caller's bug
}

// printTemplate prints the JSON object data with cli-runtime's jsonpath or go-template printer.
func printTemplate(w io.Writer, data []byte, output string) error {
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, &obj.Object); err != nil {
		return err
	}
	pf := genericclioptions.NewPrintFlags("")
	*pf.OutputFormat = output
	p, err := pf.ToPrinter()
	if err != nil {
		return fmt.Errorf("--output %q: %w", output, err)
	}
	return p.PrintObj(obj, w)
}

// terminal describes where text goes: its width (COLUMNS first, then the terminal's; 0 when
// unknown) and whether colour is wanted (a terminal, and NO_COLOR unset: https://no-color.org).
func terminal(w io.Writer) (width int, color bool) {
	f, ok := w.(*os.File)
	tty := ok && term.IsTerminal(int(f.Fd()))
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		width = c
	} else if tty {
		if c, _, err := term.GetSize(int(f.Fd())); err == nil {
			width = c
		}
	}
	_, noColor := os.LookupEnv("NO_COLOR")
	return width, tty && !noColor
}
