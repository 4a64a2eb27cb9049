package dynamolease

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestRedTeam24TableNameRuleHolds pins the table-name check that replaced
// the one regexp `^[a-zA-Z0-9_.-]{3,255}$` with a character regexp and a
// length check (validTable, issue 38): every name, accepted or refused,
// is judged as the old rule judged it. The names are the lengths around
// both bounds in each character class, names with a trailing newline
// (which `$` does not let through), multi-byte and invalid UTF-8 (bytes,
// not runes, are counted), and random strings over an alphabet of allowed
// and refused bytes.
func TestRedTeam24TableNameRuleHolds(t *testing.T) {
	old := regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)
	names := []string{"", "\n", "ab\n", "abc\n", "abc\r", "ab\u00e9", "abc\u00e9", "\u00e9\u00e9", "\xff\xfe\xfd", "a\x00c"}
	for _, c := range []string{"a", "Z", "0", "_", ".", "-", "\u00e9", " "} {
		for _, n := range []int{1, 2, 3, 4, 127, 128, 254, 255, 256, 1000} {
			names = append(names, strings.Repeat(c, n), strings.Repeat(c, n-1)+"\n", "ab"+strings.Repeat(c, n))
		}
	}
	const alphabet = "aZ09_.-/ #\n\x00\xff\xc3\xa9"
	rng := rand.New(rand.NewPCG(24, 24))
	for range 20000 {
		b := make([]byte, rng.IntN(300))
		for i := range b {
			if rng.IntN(50) == 0 {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[i] = alphabet[rng.IntN(7)]
			}
		}
		names = append(names, string(b))
	}
	for _, name := range names {
		if got, want := validTable(name), old.MatchString(name); got != want {
			t.Errorf("validTable(%q) (%d bytes) = %v, the old rule said %v", name, len(name), got, want)
		}
	}
}
