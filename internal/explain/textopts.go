package explain

import (
	"io"
	"strings"
)

// TextOptions adapt Text to where it is shown.
type TextOptions struct {
	// Width wraps prose lines (explanations, warnings, reasons, notes) at this many columns, with
	// their continuation indented; 0 never wraps. Tables are never wrapped.
	Width int
	// Color marks headings (bold), warnings (yellow) and a partial report (red) with ANSI escapes.
	Color bool
}

// ANSI escapes of TextOptions.Color.
const (
	ansiBold   = "\x1b[1m"
	ansiYellow = "\x1b[33m"
	ansiRed    = "\x1b[31m"
	ansiReset  = "\x1b[0m"
)

// TextWith writes the report like Text, adapted by o.
func TextWith(w io.Writer, r Report, o TextOptions) error {
	p := &printer{w: w, opts: o}
	p.report(r)
	return p.err
}

// paint wraps s in an ANSI colour when colour is on.
func (p *printer) paint(color, s string) string {
	if !p.opts.Color {
		return s
	}
	return color + s + ansiReset
}

// prose prints text after prefix (both indented by indent), wrapped at the width when set; the
// continuation lines are indented under the text.
func (p *printer) prose(indent, prefix, text string) {
	lines := wrap(text, p.opts.Width-len([]rune(indent+prefix)))
	pad := strings.Repeat(" ", len([]rune(prefix)))
	for i, l := range lines {
		lead := pad
		if i == 0 {
			lead = prefix
		}
		p.printf("%s%s%s\n", indent, lead, l)
	}
}

// wrap splits text at spaces into lines of at most width runes (a longer word stays whole);
// width <= 0, or too small to be useful, returns text as one line.
func wrap(text string, width int) []string {
	if width < 20 || len([]rune(text)) <= width {
		return []string{text}
	}
	var lines []string
	line := ""
	for _, word := range strings.Split(text, " ") {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}
