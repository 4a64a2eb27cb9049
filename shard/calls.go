package shard

import (
	"context"
	"time"

	"github.com/leasehold/leasehold/lease/driver"
)

// The Store's calls, each bounded by CallTimeout (driver.Call), as every
// lease call is, so that no request outlasts the renew deadline, and no
// reader (ReadStatus) waits for ever on a store that stopped answering.

func (w *Worker) get(ctx context.Context, key, known string) (data []byte, version string, err error) {
	return getWithin(ctx, w.cfg.Store, w.cfg.CallTimeout, key, known)
}

func (w *Worker) put(ctx context.Context, key string, data []byte, version string) (newVersion string, err error) {
	err = driver.Call(ctx, w.cfg.CallTimeout, func(ctx context.Context) (err error) {
		newVersion, err = w.cfg.Store.Put(ctx, key, data, version)
		return err
	})
	return newVersion, err
}

func (w *Worker) list(ctx context.Context, prefix string) (versions map[string]string, err error) {
	return listWithin(ctx, w.cfg.Store, w.cfg.CallTimeout, prefix)
}

func getWithin(ctx context.Context, store Store, timeout time.Duration, key, known string) (data []byte, version string, err error) {
	err = driver.Call(ctx, timeout, func(ctx context.Context) (err error) {
		data, version, err = store.Get(ctx, key, known)
		return err
	})
	return data, version, err
}

func listWithin(ctx context.Context, store Store, timeout time.Duration, prefix string) (versions map[string]string, err error) {
	err = driver.Call(ctx, timeout, func(ctx context.Context) (err error) {
		versions, err = store.List(ctx, prefix)
		return err
	})
	return versions, err
}
