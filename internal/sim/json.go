package sim

import (
	"encoding/json"
	"io"
)

// JSON writes the result as indented JSON.
func JSON(w io.Writer, res Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(res)
}
