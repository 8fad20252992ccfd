package explain

import (
	"encoding/json"
	"io"
)

// JSON writes the report as indented JSON. Amounts are exact strings; the layout is the Report's
// JSON tags, stable for tools.
func JSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
