package explain

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// unit is how an amount is measured.
type unit int

const (
	unitBytes unit = iota
	unitCount
	unitMillicores
)

// unitOfSignal returns the unit of a signal's amounts.
func unitOfSignal(s signal.Signal) unit {
	if s.Bytes() {
		return unitBytes
	}
	return unitCount
}

// unitOfResource returns the unit of a node capacity resource.
func unitOfResource(name string) unit {
	switch name {
	case threshold.ResourceCPU:
		return unitMillicores
	case threshold.ResourcePID:
		return unitCount
	}
	return unitBytes
}

// exact prints v exactly: an integer string for bytes and counts, a quantity for millicores
// ("3900m", "4").
func exact(v int64, u unit) string {
	if u == unitMillicores {
		return resource.NewMilliQuantity(v, resource.DecimalSI).String()
	}
	return strconv.FormatInt(v, 10)
}

// human prints v for people: bytes in Ti/Gi/Mi/Ki with one decimal where the value is not an exact
// multiple ("12.9Gi", "100Mi", "1.0Gi" for 1Gi+16 bytes), counts with k/M the same way, millicores
// as a quantity.
func human(v int64, u unit) string {
	switch u {
	case unitMillicores:
		return resource.NewMilliQuantity(v, resource.DecimalSI).String()
	case unitCount:
		return threshold.FormatHuman(v, false)
	}
	return threshold.FormatHuman(v, true)
}

// percent prints a percentage with one decimal.
func percent(p float64) string {
	if math.IsNaN(p) || math.IsInf(p, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", p)
}

// percentOf returns v as a percentage of total (0 when total is not positive).
func percentOf(v, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return round1(float64(v) / float64(total) * 100)
}

// round1 rounds to one decimal so JSON and text agree.
func round1(f float64) float64 { return math.Round(f*10) / 10 }

// age prints a stats age rounded to a tenth of a second ("0s", "12.3s", "1m5s").
func age(d time.Duration) string {
	return d.Round(100 * time.Millisecond).String()
}

// seconds returns d in seconds rounded to a tenth, as a pointer for JSON.
func seconds(d time.Duration) *float64 {
	s := round1(d.Seconds())
	return &s
}
