package shard

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
)

// URLOpener opens a group's Store from a URL: the lease URL of the group's
// prefix (s3://BUCKET/PREFIX, mem://NAME). Backends register one per scheme
// in their init function, as they register a lease.URLOpener; "mem" is
// registered by this package (memlease.Default, the process-wide store).
type URLOpener interface {
	// OpenShardURL opens the Store that holds the group u names, and
	// returns it with the group's prefix in it (Config.Group). Every call
	// of the Store acts for the client opts.Identity. It must reject query
	// parameters it does not know with an error wrapping lease.ErrInvalid.
	OpenShardURL(ctx context.Context, u *url.URL, opts lease.Options) (store Store, group string, err error)
}

var openers = struct {
	sync.RWMutex
	m map[string]URLOpener
}{m: map[string]URLOpener{}}

// Register makes opener available to Open for URLs with the given scheme.
// It panics if the scheme is registered twice, as that is a programming
// error caught at start-up.
func Register(scheme string, opener URLOpener) {
	openers.Lock()
	defer openers.Unlock()
	if _, dup := openers.m[scheme]; dup {
		panic("shard: scheme " + scheme + " registered twice")
	}
	openers.m[scheme] = opener
}

// Schemes returns the schemes Open knows, sorted.
func Schemes() []string {
	openers.RLock()
	defer openers.RUnlock()
	out := make([]string, 0, len(openers.m))
	for s := range openers.m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Open opens the Store of the group named by urlstr, such as
// "s3://bucket/jobs" or "mem://jobs", for the worker opts.Identity, and
// returns it with the group's prefix, for Config.Store and Config.Group.
// The scheme's backend must have been imported. Errors wrap
// lease.ErrInvalid for a malformed URL or an unknown scheme (the message
// lists the registered ones).
func Open(ctx context.Context, urlstr string, opts lease.Options) (store Store, group string, err error) {
	u, err := url.Parse(urlstr)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // url.Error repeats the URL, password and all
			err = ue.Err
		}
		return nil, "", &lease.OptionError{Pkg: "shard", Field: "URL", Value: strconv.Quote(lease.RedactURL(urlstr)), Reason: "is malformed: " + err.Error()}
	}
	openers.RLock()
	opener, ok := openers.m[u.Scheme]
	openers.RUnlock()
	if !ok {
		return nil, "", &lease.OptionError{Pkg: "shard", Field: "URL", Value: strconv.Quote(lease.RedactURL(u.String())),
			Reason: fmt.Sprintf("has scheme %q, which has no shard store (registered: %s)", u.Scheme, strings.Join(Schemes(), ", "))}
	}
	return opener.OpenShardURL(ctx, u, opts)
}

func init() { Register(memlease.Scheme, memOpener{}) }

// memOpener opens "mem://NAME" as the group NAME in memlease.Default.
type memOpener struct{}

func (memOpener) OpenShardURL(_ context.Context, u *url.URL, opts lease.Options) (Store, string, error) {
	group := u.Host + u.Path
	switch {
	case len(u.Query()) > 0:
		return nil, "", &lease.OptionError{Pkg: "shard", Field: "URL", Value: strconv.Quote(lease.RedactURL(u.String())), Reason: "has query parameters; mem URLs take none"}
	case group == "":
		return nil, "", &lease.OptionError{Pkg: "shard", Field: "URL", Value: strconv.Quote(u.String()), Reason: "names no group: want mem://NAME"}
	}
	return memlease.Default.Objects(opts.Identity), group, nil
}
