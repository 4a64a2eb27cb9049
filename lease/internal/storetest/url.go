package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
)

// BadURL is a lease URL that lease.Open must refuse.
type BadURL struct {
	// Name names the row's subtest; URL is the URL to refuse.
	Name, URL string
	// Mention is what the error must say.
	Mention string
}

// RefuseURLs checks, in a subtest per row, that lease.Open refuses each URL
// with lease.ErrInvalid, an error of the backend pkg's URL field
// ("s3lease: URL (...)") that says row.Mention and does not show the URL's
// password (any password in rows must be "secret").
func RefuseURLs(t *testing.T, pkg string, rows []BadURL) {
	t.Helper()
	for _, row := range rows {
		t.Run(row.Name, func(t *testing.T) {
			_, err := lease.Open(t.Context(), row.URL, lease.Options{Identity: "worker-1"})
			t.Logf("%s: %v", row.URL, err)
			if !errors.Is(err, lease.ErrInvalid) {
				t.Fatalf("lease.Open(%q): %v, want lease.ErrInvalid", row.URL, err)
			}
			if !strings.Contains(err.Error(), row.Mention) || !strings.HasPrefix(err.Error(), pkg+": URL (") {
				t.Errorf("lease.Open(%q): %q, want a %s URL error mentioning %q", row.URL, err, pkg, row.Mention)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q shows the URL's password", err)
			}
		})
	}
}
