package lease

import (
	"net/url"
	"strings"
)

// RedactURL returns the URL s fit for an error or a log: the password of its
// user info is replaced by "xxxxx", as url.URL.Redacted does, and so is the
// password of any URL in its query (?endpoint=https://user:pw@host/), and
// any sig= (an Azure SAS signature) in it or in such a URL. It also works on
// a URL that url.Parse refuses, and leaves everything else as written.
// Every error that quotes a lease URL quotes it through RedactURL. A URL
// of URLs, a scheme and lease URLs joined by commas
// ("quorum:s3://a/k,s3://b/k,s3://c/k"), is redacted member by member.
func RedactURL(s string) string {
	if scheme, members, ok := urlOfURLs(s); ok {
		for i, m := range members {
			members[i] = RedactURL(m)
		}
		return scheme + ":" + strings.Join(members, ",")
	}
	if u, err := url.Parse(s); err != nil {
		s = redactUserinfo(s)
	} else if u.User != nil {
		s = u.Redacted()
	}
	i := strings.IndexByte(s, '?')
	if i < 0 {
		return s
	}
	query, fragment, hasFragment := strings.Cut(s[i+1:], "#")
	pieces := strings.Split(query, "&")
	for j, piece := range pieces {
		pieces[j] = redactQueryPiece(piece)
	}
	out := s[:i+1] + strings.Join(pieces, "&")
	if hasFragment {
		out += "#" + fragment
	}
	return out
}

// redactQueryPiece redacts one "key=value" of a query: a sig, or a value
// that is itself a URL with a password or a sig (shown unescaped when it
// is redacted, which a message can afford).
func redactQueryPiece(piece string) string {
	key, value, ok := strings.Cut(piece, "=")
	if !ok || value == "" {
		return piece
	}
	if k, err := url.QueryUnescape(key); err == nil && strings.EqualFold(k, "sig") {
		return key + "=xxxxx"
	}
	v, err := url.QueryUnescape(value)
	if err != nil {
		v = value
	}
	if !strings.Contains(v, "//") { // no authority, so no user info
		return piece
	}
	if r := RedactURL(v); r != v {
		return key + "=" + r
	}
	return piece
}

// redactUserinfo hides the password of a URL that url.Parse refused, between
// its "://" and the "@" that ends its authority: "s3://user:pw@b/k%zz"
// becomes "s3://user:xxxxx@b/k%zz".
func redactUserinfo(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	authority := s[i+3:]
	if end := strings.IndexAny(authority, "/?#"); end >= 0 {
		authority = authority[:end]
	}
	at := strings.LastIndexByte(authority, '@')
	colon := strings.IndexByte(authority, ':')
	if at < 0 || colon < 0 || colon > at {
		return s
	}
	return s[:i+3] + authority[:colon+1] + "xxxxx" + s[i+3+at:]
}

// urlOfURLs splits a URL of URLs, "scheme:" and URLs joined by commas
// (quorumlease's), into its scheme and members. Parsed as one URL, it is
// an opaque URL with no user info and a query that starts in whichever
// member has one first, so the members' passwords went unredacted (red
// team 17). A comma begins a member only before "scheme://": one inside
// a member (a password's, written raw rather than as %2C) split it into
// halves that each had nothing to redact, and the password went out
// whole (red team 18).
func urlOfURLs(s string) (scheme string, members []string, ok bool) {
	scheme, rest, found := strings.Cut(s, ":")
	if !found || !isScheme(scheme) || strings.HasPrefix(rest, "//") || !strings.Contains(rest, "://") {
		return "", nil, false
	}
	for i, piece := range strings.Split(rest, ",") {
		if before, _, ok := strings.Cut(piece, "://"); i > 0 && !(ok && isScheme(before)) {
			members[len(members)-1] += "," + piece
			continue
		}
		members = append(members, piece)
	}
	return scheme, members, true
}

// isScheme reports whether s is a URL scheme: a letter, then letters,
// digits, "+", "-" and ".".
func isScheme(s string) bool {
	for i, c := range s {
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}
