package threshold

import "strconv"

// FormatHuman prints v for people, rounded: bytes (binary) in Ki/Mi/Gi/Ti/Pi/Ei with one decimal where v
// is not an exact multiple ("12.9Gi", "100Mi", "40.0Gi" for 40Gi+1440 bytes, "512B"), counts with
// k/M/G/T/P/E the same way. FormatQuantity is the exact form.
func FormatHuman(v int64, binary bool) string {
	if binary {
		return scaled(v, 1024, []string{"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}, "B")
	}
	return scaled(v, 1000, []string{"k", "M", "G", "T", "P", "E"}, "")
}

// scaled prints v with the largest suffix whose unit it reaches.
func scaled(v, base int64, suffixes []string, plain string) string {
	sign := ""
	a := uint64(v)
	if v < 0 {
		sign, a = "-", uint64(-(v+1))+1 // -MinInt64 does not fit an int64
	}
	div, idx := uint64(1), -1
	for i := range suffixes {
		next := div * uint64(base)
		if a < next || next/uint64(base) != div {
			break
		}
		div, idx = next, i
	}
	if idx < 0 {
		if a == 0 {
			return "0"
		}
		return sign + strconv.FormatUint(a, 10) + plain
	}
	if a%div == 0 {
		return sign + strconv.FormatUint(a/div, 10) + suffixes[idx]
	}
	return sign + strconv.FormatFloat(float64(a)/float64(div), 'f', 1, 64) + suffixes[idx]
}
