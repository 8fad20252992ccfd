package threshold

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels to branch on with errors.Is. The error text itself is always the kubelet's.
var (
	// ErrUnsupportedSignal: the key is not an eviction signal the kubelet knows.
	ErrUnsupportedSignal = errors.New("unsupported eviction signal")
	// ErrInvalidValue: a threshold, grace period or minimum reclaim value is out of range or unparsable.
	ErrInvalidValue = errors.New("invalid eviction value")
	// ErrMissingGracePeriod: a soft threshold has no grace period.
	ErrMissingGracePeriod = errors.New("missing grace period")
	// ErrInvalidReservation: a kubeReserved/systemReserved entry is not acceptable.
	ErrInvalidReservation = errors.New("invalid reservation")
	// ErrMalformedFlag: a flag value is not a list of key<value or key=value pairs.
	ErrMalformedFlag = errors.New("malformed flag value")
)

// kubeletError carries the kubelet's exact message and a sentinel reason.
type kubeletError struct {
	reason error
	msg    string
	cause  error
}

func (e *kubeletError) Error() string { return e.msg }

// Unwrap returns the sentinel reason and, for parse failures, the underlying error.
func (e *kubeletError) Unwrap() []error {
	if e.cause != nil {
		return []error{e.reason, e.cause}
	}
	return []error{e.reason}
}

func kubeletErrorf(reason error, format string, args ...any) error {
	return &kubeletError{reason: reason, msg: fmt.Sprintf(format, args...)}
}

// invalid wraps a parse error (strconv, time, resource) returned as-is by the kubelet.
func invalid(cause error) error {
	return &kubeletError{reason: ErrInvalidValue, msg: cause.Error(), cause: cause}
}

// SettingError names the setting, key and value a kubelet error belongs to.
type SettingError struct {
	// Setting is the KubeletConfiguration field, e.g. "evictionHard".
	Setting string
	// Key is the map key (the signal or resource name); empty for scalar settings.
	Key string
	// Value is the configured value.
	Value string
	// Err holds the kubelet's error.
	Err error
}

// Error renders `evictionHard["memory.available"]: <kubelet text>`, adding the value when the
// kubelet's text does not already contain it.
func (e *SettingError) Error() string {
	where := e.Setting
	if e.Key != "" {
		where = fmt.Sprintf("%s[%q]", e.Setting, e.Key)
	}
	msg := e.Err.Error()
	if e.Value != "" && !strings.Contains(msg, e.Value) && !errors.Is(e.Err, ErrUnsupportedSignal) {
		return fmt.Sprintf("%s: value %q: %s", where, e.Value, msg)
	}
	return where + ": " + msg
}

// Unwrap returns the kubelet's error.
func (e *SettingError) Unwrap() error { return e.Err }
