package shard

import (
	"context"

	"github.com/leasehold/leasehold/lease/driver"
)

// The Store's calls, each bounded by CallTimeout (driver.Call), as every
// lease call is, so that no request outlasts the renew deadline.

func (w *Worker) get(ctx context.Context, key, known string) (data []byte, version string, err error) {
	err = driver.Call(ctx, w.cfg.CallTimeout, func(ctx context.Context) (err error) {
		data, version, err = w.cfg.Store.Get(ctx, key, known)
		return err
	})
	return data, version, err
}

func (w *Worker) put(ctx context.Context, key string, data []byte, version string) (newVersion string, err error) {
	err = driver.Call(ctx, w.cfg.CallTimeout, func(ctx context.Context) (err error) {
		newVersion, err = w.cfg.Store.Put(ctx, key, data, version)
		return err
	})
	return newVersion, err
}

func (w *Worker) list(ctx context.Context, prefix string) (versions map[string]string, err error) {
	err = driver.Call(ctx, w.cfg.CallTimeout, func(ctx context.Context) (err error) {
		versions, err = w.cfg.Store.List(ctx, prefix)
		return err
	})
	return versions, err
}
