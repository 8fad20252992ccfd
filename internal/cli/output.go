package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

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

// printTemplate prints v (a report, encoded as its JSON) with cli-runtime's jsonpath or go-template
// printer, exactly as kubectl does with -o jsonpath=... / -o go-template=....
func printTemplate(w io.Writer, v any, output string) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
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
