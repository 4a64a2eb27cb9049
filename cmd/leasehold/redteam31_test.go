package main

import (
	"net/url"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease/quorumlease"
	"github.com/leasehold/leasehold/runner"
)

// TestRedTeam31CandidatesURLFormsHold (an attack that held): for lease
// URLs with encoded paths, trailing slashes, query strings and fragments,
// alone and as quorum members with %2C in their paths or queries, the
// candidates' URL names each member's key (the path without its leading
// slash, as the backends read it) followed by runner.CandidatesSuffix,
// with the same query, and keeps the quorum's members apart; and run
// refuses each candidates' URL so found (namesCandidates), and no lease
// URL it was made from.
func TestRedTeam31CandidatesURLFormsHold(t *testing.T) {
	for _, in := range []string{
		"s3://b/jobs/nightly/",
		"s3://b/a%2Cb?region=eu-west-1",
		"gs://b/a%2Fb%2Ec",
		"dynamodb://t/n?endpoint=http%3A%2F%2Fh%2C1%3A8000&region=x",
		"azblob://c/job#frag",
		"quorum:s3://b/a%2Cb,gs://c/k?x=%2C,dynamodb://t/n?endpoint=http%3A%2F%2Fh%3A1",
	} {
		out, err := candidatesURL(in)
		if err != nil {
			t.Errorf("candidatesURL(%q): %v", in, err)
			continue
		}
		ins, outs := members(t, in), members(t, out)
		if len(ins) != len(outs) {
			t.Errorf("candidatesURL(%q) = %q: %d members, want %d", in, out, len(outs), len(ins))
			continue
		}
		for i := range ins {
			a, b := ins[i], outs[i]
			if b.Host != a.Host || b.RawQuery != a.RawQuery || b.Fragment != a.Fragment || strings.TrimPrefix(b.Path, "/") != strings.TrimPrefix(a.Path, "/")+runner.CandidatesSuffix {
				t.Errorf("candidatesURL(%q) member %d = %q, want %q's key followed by %s", in, i+1, b, a, runner.CandidatesSuffix)
			}
		}
		if !namesCandidates(out) {
			t.Errorf("namesCandidates(%q) = false, want true", out)
		}
		if namesCandidates(in) {
			t.Errorf("namesCandidates(%q) = true, want false", in)
		}
	}
}

// members returns the URLs of u's quorum members, or u alone.
func members(t *testing.T, u string) []*url.URL {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	if p.Scheme != quorumlease.Scheme {
		return []*url.URL{p}
	}
	ms, err := quorumlease.MemberURLs(p)
	if err != nil {
		t.Fatalf("MemberURLs(%q): %v", u, err)
	}
	var out []*url.URL
	for _, m := range ms {
		out = append(out, members(t, m)...)
	}
	return out
}
