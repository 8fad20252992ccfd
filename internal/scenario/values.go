package scenario

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/sim"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// maxBytes bounds byte amounts: 1 EiB is far beyond any node and keeps every sum inside int64.
const maxBytes = int64(1) << 60

// value parses a scalar node with parse, reporting the parse error at the node.
func value[T any](d *doc, path string, n *yaml.Node, parse func(string) (T, error)) (T, bool) {
	var zero T
	s, ok := d.scalar(path, n)
	if !ok {
		return zero, false
	}
	v, err := parse(s)
	if err != nil {
		d.fail(path, n, "%v", err)
		return zero, false
	}
	return v, true
}

// bytes parses a quantity of bytes ("1536Mi", "1.5Gi", "2G", "1000000"), 0 to 1Ei.
func (d *doc) bytes(path string, n *yaml.Node) (int64, bool) { return value(d, path, n, parseBytes) }

func parseBytes(s string) (int64, error) {
	q, err := threshold.ParseQuantity(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("want a quantity of bytes like 512Mi or 1.5Gi: %w", err)
	}
	if q.Sign() < 0 {
		return 0, errNegative
	}
	if q.Cmp(*resource.NewQuantity(maxBytes, resource.BinarySI)) > 0 {
		return 0, fmt.Errorf("more than 1Ei")
	}
	return q.Value(), nil
}

// rate parses bytes per second or minute ("50Mi/s", "3Gi/m", "-10Mi/s", "0").
func (d *doc) rate(path string, n *yaml.Node) (int64, bool) { return value(d, path, n, parseRate) }

func parseRate(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	per := []struct {
		suffix string
		secs   float64
	}{{"/s", 1}, {"/min", 60}, {"/m", 60}, {"/h", 3600}}
	for _, p := range per {
		amount, ok := strings.CutSuffix(s, p.suffix)
		if !ok {
			continue
		}
		neg := strings.HasPrefix(amount, "-")
		v, err := parseBytes(strings.TrimPrefix(amount, "-"))
		if err != nil {
			return 0, fmt.Errorf("want a rate like 50Mi/s or 3Gi/m: %w", err)
		}
		r := int64(math.Round(float64(v) / p.secs))
		if neg {
			r = -r
		}
		return r, nil
	}
	return 0, fmt.Errorf("want a rate like 50Mi/s or 3Gi/m (bytes per /s, /m or /h)")
}

// duration parses a Go duration ("10s", "1m30s"), 0 to 24h.
func (d *doc) duration(path string, n *yaml.Node) (time.Duration, bool) {
	return value(d, path, n, parseDuration)
}

func parseDuration(s string) (time.Duration, error) {
	v, err := time.ParseDuration(strings.TrimSpace(s))
	switch {
	case err != nil:
		return 0, errors.New("want a duration like 10s or 1m30s")
	case v < 0:
		return 0, errNegative
	case v > maxDuration:
		return 0, fmt.Errorf("more than %s", maxDuration)
	}
	return v, nil
}

// maxDuration bounds every duration of a scenario, and the timeline itself.
const maxDuration = 24 * time.Hour

// integer parses an integer within [lo, hi].
func (d *doc) integer(path string, n *yaml.Node, lo, hi int64) (int64, bool) {
	return value(d, path, n, func(s string) (int64, error) {
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || v < lo || v > hi {
			return 0, fmt.Errorf("want an integer from %d to %d", lo, hi)
		}
		return v, nil
	})
}

// ramp parses a usage: a quantity (constant) or {start, rate, until, after}.
func (d *doc) ramp(path string, n *yaml.Node) (sim.Ramp, bool) {
	n = resolve(n)
	if n == nil {
		return sim.Ramp{}, false
	}
	if n.Kind == yaml.ScalarNode {
		v, ok := d.bytes(path, n)
		return sim.Ramp{Start: v}, ok
	}
	f := d.mapping(path, n, "start", "rate", "until", "after")
	var r sim.Ramp
	ok := true
	if v, given := f["start"]; given {
		r.Start, ok = d.bytes(path+".start", v)
	}
	if v, given := f["rate"]; given {
		var good bool
		r.Rate, good = d.rate(path+".rate", v)
		ok = ok && good
	}
	if v, given := f["until"]; given {
		var good bool
		r.Until, good = d.bytes(path+".until", v)
		ok = ok && good
		if good && r.Rate > 0 && r.Until < r.Start {
			d.fail(path+".until", v, "below start %s: a growing ramp stops above its start", sim.FormatBytes(r.Start))
			ok = false
		}
	}
	if v, given := f["after"]; given {
		var good bool
		r.After, good = d.duration(path+".after", v)
		ok = ok && good
	}
	return r, ok
}

// parseCPU parses a cpu quantity ("500m", "2") into millicores.
func parseCPU(s string) (int64, error) {
	q, err := threshold.ParseQuantity(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("want a cpu quantity like 500m or 2: %w", err)
	}
	if q.Sign() < 0 {
		return 0, errNegative
	}
	if q.Cmp(*resource.NewQuantity(1<<40, resource.DecimalSI)) > 0 {
		return 0, fmt.Errorf("more than %d cpus", int64(1)<<40)
	}
	return q.MilliValue(), nil
}
