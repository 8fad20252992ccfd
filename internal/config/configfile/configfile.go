package configfile

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// MaxFileBytes bounds what Decode reads: a configuration is a few hundred bytes.
const MaxFileBytes = 1 << 20

// Kind names a configuration file type: its apiVersion and kind, and the sentinel error a file of
// another type wraps.
type Kind struct {
	APIVersion, Kind string
	// Wrong is wrapped by the error of a file with another apiVersion or kind.
	Wrong error
}

// Decode decodes a configuration of kind k (YAML or JSON) from r strictly: unknown or duplicate fields
// are errors, and apiVersion and kind must be k's. name (the file path) prefixes every error.
func Decode[T any](r io.Reader, name string, k Kind) (*T, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read: %w", name, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, MaxFileBytes)
	}
	var c T
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("%s: decode: %w", name, err)
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return nil, fmt.Errorf("%s: decode: %w", name, err)
	}
	if tm.APIVersion != k.APIVersion || tm.Kind != k.Kind {
		return nil, fmt.Errorf("%s: apiVersion %q kind %q: %w", name, tm.APIVersion, tm.Kind, k.Wrong)
	}
	return &c, nil
}

// DecodeFile opens path and calls Decode.
func DecodeFile[T any](path string, k Kind) (*T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Decode[T](f, path, k)
}

// FieldError is one validation problem: where the value came from (the file, the flag that set it, or
// "defaults"), the field (its JSON path in the file, e.g. rateLimit.burst), the value and why it is
// wrong.
type FieldError struct {
	Source string
	Field  string
	Value  any
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: field %s: value %q: %s", e.Source, e.Field, fmt.Sprint(e.Value), e.Reason)
}

// Validator collects every problem of a configuration.
type Validator struct {
	// Source names where a field came from.
	Source func(field string) string
	errs   []error
}

// Check records a problem with field unless ok.
func (v *Validator) Check(ok bool, field string, value any, reason string) {
	if !ok {
		v.errs = append(v.errs, &FieldError{Source: v.Source(field), Field: field, Value: value, Reason: reason})
	}
}

// Address checks a listen address: host:port or :port with a port number in range; "0" (and "" when
// empty is allowed) disables the server.
func (v *Validator) Address(field, addr string, allowEmpty bool) {
	if addr == "0" || (addr == "" && allowEmpty) {
		return
	}
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		var n int
		n, err = strconv.Atoi(port)
		if err == nil && (n < 0 || n > 65535) {
			err = fmt.Errorf("port %d out of range", n)
		}
	}
	v.Check(err == nil, field, addr, `must be host:port, :port or "0" to disable: `+Text(err))
}

// Err returns every problem joined (errors.Join of *FieldError, in the order checked), or nil.
func (v *Validator) Err() error { return errors.Join(v.errs...) }

// Text is err's message, "" for nil.
func Text(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
