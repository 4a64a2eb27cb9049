package quorumlease

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/leasehold/leasehold/lease"
)

// Scheme is the URL scheme quorumlease registers with lease.Open.
const Scheme = "quorum"

func init() { lease.Register(Scheme, URLOpener{}) }

// URLOpener opens "quorum:" URLs: the members' URLs, each opened with
// lease.Open, joined by commas.
type URLOpener struct{}

// OpenURL opens the quorum lease urlstr names, such as
// "quorum:s3://a/job,dynamodb://b/job,gs://c/job", for the contender
// opts describes: lease.Open for quorum: URLs. Each member's scheme must
// be registered (its backend imported).
func OpenURL(ctx context.Context, urlstr string, opts lease.Options) (lease.Lease, error) {
	return lease.Open(ctx, urlstr, opts)
}

// OpenLeaseURL is lease.URLOpener's.
func (URLOpener) OpenLeaseURL(ctx context.Context, u *url.URL, opts lease.Options) (lease.Lease, error) {
	urls, err := MemberURLs(u)
	if err != nil {
		return nil, err
	}
	members := make([]lease.Lease, len(urls))
	names := make([]string, len(urls))
	for i, mu := range urls {
		names[i] = lease.RedactURL(mu)
		if members[i], err = lease.Open(ctx, mu, opts); err != nil {
			if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
				return nil, cerr // unwrapped, as lease.Lease's methods return it
			}
			return nil, fmt.Errorf("quorumlease: member %d (%s): %w", i+1, names[i], err)
		}
	}
	return New(members, names)
}

// MemberURLs returns the member URLs of a "quorum:" URL, refusing, with a
// *lease.OptionError naming it, an empty member, a member that is itself
// a quorum, one named twice, and, as New does, an even number of members
// or fewer than three (so that leasehold check, which checks the members
// it returns, refuses what leasehold run refuses).
func MemberURLs(u *url.URL) ([]string, error) {
	rest := strings.TrimPrefix(u.String(), Scheme+":")
	if u.Scheme != Scheme || u.Opaque == "" || rest == u.String() {
		return nil, &lease.OptionError{Pkg: "quorumlease", Field: "URL", Value: quote(u.String()), Reason: `must be "quorum:" and the members' URLs joined by commas, such as "quorum:s3://a/job,s3://b/job,s3://c/job"`}
	}
	urls := strings.Split(rest, ",")
	seen := map[string]int{}
	for i, mu := range urls {
		field := fmt.Sprintf("URL member %d", i+1)
		m, err := url.Parse(mu)
		switch {
		case strings.TrimSpace(mu) == "":
			return nil, &lease.OptionError{Pkg: "quorumlease", Field: field, Value: quote(u.String()), Reason: "is empty"}
		case err != nil || m.Scheme == "":
			// The whole URL quoted, redacted, not the piece: a comma
			// written raw in a member's password splits it here, and
			// half a password has nothing to redact (red team 18).
			return nil, &lease.OptionError{Pkg: "quorumlease", Field: field, Value: quote(u.String()), Reason: "is not a lease URL (scheme://...); a comma inside a member's URL is written %2C"}
		case m.Scheme == Scheme:
			return nil, &lease.OptionError{Pkg: "quorumlease", Field: field, Value: quote(mu), Reason: "is a quorum itself: members are single leases"}
		}
		key := sameStore(m)
		if j, dup := seen[key]; dup {
			return nil, &lease.OptionError{Pkg: "quorumlease", Field: field, Value: quote(mu), Reason: fmt.Sprintf("names the same store and key as member %d: a majority counted on one store twice would not be one", j+1)}
		}
		seen[key] = i
	}
	if err := checkCount(len(urls)); err != nil {
		return nil, err
	}
	return urls, nil
}

// sameStore is what two URLs naming one store's key share: scheme, host,
// path, and the endpoint and region they reach it at (DynamoDB tables of
// one name in two regions are two stores). Two URLs that differ only in
// other ways (a region given to one S3 URL and not the other) are caught
// when read, by the record they share (see Lease.Acquire).
func sameStore(u *url.URL) string {
	q := u.Query()
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + strings.TrimSuffix(u.Path, "/") + " " + q.Get("endpoint") + " " + q.Get("region")
}

func quote(s string) string { return fmt.Sprintf("%q", lease.RedactURL(s)) }
