package threshold

import "strings"

// ParseFlagMap parses the --eviction-hard / --eviction-soft flag form "memory.available<100Mi,
// nodefs.available<10%" like component-base's LangleSeparatedMapStringString: items are split on
// ",", empty items are skipped, each item is split at its first "<", and key and value are
// trimmed of surrounding whitespace. An item without "<" fails with the kubelet's
// "malformed pair, expect string<string". Later duplicates win. One call is one flag occurrence
// (the kubelet's first occurrence replaces the defaults; later ones add to the map).
func ParseFlagMap(value string) (map[string]string, error) {
	return parsePairs(value, "<", "malformed pair, expect string<string")
}

// ParseKeyValueFlagMap parses the --eviction-soft-grace-period / --eviction-minimum-reclaim flag
// form "memory.available=1m30s,imagefs.available=2Gi" like component-base's MapStringString:
// split on ",", skip empty items, split each at its first "=", trim; an item without "=" fails
// with "malformed pair, expect string=string".
func ParseKeyValueFlagMap(value string) (map[string]string, error) {
	return parsePairs(value, "=", "malformed pair, expect string=string")
}

func parsePairs(value, sep, malformed string) (map[string]string, error) {
	out := map[string]string{}
	for _, item := range strings.Split(value, ",") {
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, sep)
		if !ok {
			return nil, &SettingError{Setting: "flag", Value: item, Err: kubeletErrorf(ErrMalformedFlag, "%s", malformed)}
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}
