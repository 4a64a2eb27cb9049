package lease_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
)

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  lease.Options
		want  lease.Options // the filled-in options, when valid
		field string        // the field at fault, when invalid
		value string        // how the message shows the field's value
	}{
		{
			name: "TTL 0 takes the default",
			opts: lease.Options{Identity: "worker-1"},
			want: lease.Options{Identity: "worker-1", TTL: 15 * time.Second, CallTimeout: 3 * time.Second, RenewInterval: 5625 * time.Millisecond},
		},
		{
			name: "CallTimeout defaults to TTL/5",
			opts: lease.Options{Identity: "worker-1", TTL: 10 * time.Second},
			want: lease.Options{Identity: "worker-1", TTL: 10 * time.Second, CallTimeout: 2 * time.Second, RenewInterval: 3750 * time.Millisecond},
		},
		{
			name: "explicit values kept",
			opts: lease.Options{Identity: "host-7/pid 42", TTL: 2 * time.Second, CallTimeout: 500 * time.Millisecond},
			want: lease.Options{Identity: "host-7/pid 42", TTL: 2 * time.Second, CallTimeout: 500 * time.Millisecond, RenewInterval: 750 * time.Millisecond},
		},
		{
			name: "256-byte identity",
			opts: lease.Options{Identity: strings.Repeat("w", 256)},
			want: lease.Options{Identity: strings.Repeat("w", 256), TTL: 15 * time.Second, CallTimeout: 3 * time.Second, RenewInterval: 5625 * time.Millisecond},
		},
		{name: "empty identity", opts: lease.Options{}, field: "Identity", value: `("")`},
		{name: "TTL above MaxTTL (its defaults would overflow)", opts: lease.Options{Identity: "w", TTL: 1000000 * time.Hour}, field: "TTL", value: "(1000000h0m0s)"},
		{
			name: "TTL of MaxTTL",
			opts: lease.Options{Identity: "w", TTL: lease.MaxTTL},
			want: lease.Options{Identity: "w", TTL: 24 * time.Hour, CallTimeout: 24 * time.Hour / 5, RenewInterval: 9 * time.Hour},
		},
		{name: "non-ASCII identity", opts: lease.Options{Identity: "wörker"}, field: "Identity", value: `"w\u00f6rker"`},
		{name: "control character in identity", opts: lease.Options{Identity: "worker\n1"}, field: "Identity", value: `"worker\n1"`},
		{name: "300-byte identity", opts: lease.Options{Identity: strings.Repeat("w", 300)}, field: "Identity", value: "is 300 bytes long"},
		{name: "TTL 1500µs", opts: lease.Options{Identity: "worker-1", TTL: 1500 * time.Microsecond}, field: "TTL", value: "(1.5ms)"},
		{name: "TTL below a millisecond", opts: lease.Options{Identity: "worker-1", TTL: 999 * time.Microsecond}, field: "TTL", value: "(999µs)"},
		{name: "negative TTL", opts: lease.Options{Identity: "worker-1", TTL: -time.Second}, field: "TTL", value: "(-1s)"},
		{name: "CallTimeout equal to TTL", opts: lease.Options{Identity: "worker-1", TTL: 10 * time.Second, CallTimeout: 10 * time.Second}, field: "CallTimeout", value: "(10s)"},
		{name: "CallTimeout above TTL", opts: lease.Options{Identity: "worker-1", TTL: 10 * time.Second, CallTimeout: time.Minute}, field: "CallTimeout", value: "(1m0s)"},
		{name: "RenewInterval equal to TTL", opts: lease.Options{Identity: "worker-1", TTL: 10 * time.Second, RenewInterval: 10 * time.Second}, field: "RenewInterval", value: "(10s)"},
		{name: "negative RenewInterval", opts: lease.Options{Identity: "worker-1", RenewInterval: -time.Second}, field: "RenewInterval", value: "(-1s)"},
		{name: "negative CallTimeout", opts: lease.Options{Identity: "worker-1", CallTimeout: -time.Second}, field: "CallTimeout", value: "(-1s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.opts.Validate()
			if tc.field == "" {
				if err != nil || got != tc.want {
					t.Errorf("Validate() = %+v, %v; want %+v, nil", got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, lease.ErrInvalid) {
				t.Fatalf("Validate() error %v, want one matching lease.ErrInvalid", err)
			}
			var oe *lease.OptionError
			if !errors.As(err, &oe) || oe.Field != tc.field {
				t.Errorf("Validate() error %v, want an *OptionError for %s", err, tc.field)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "lease: "+tc.field+" ") || !strings.Contains(msg, tc.value) {
				t.Errorf("Validate() error %q, want it to start %q and show the value as %s", msg, "lease: "+tc.field, tc.value)
			}
		})
	}
}

func TestOptionsLongIdentityIsShortenedInMessage(t *testing.T) {
	_, err := lease.Options{Identity: strings.Repeat("w", 1000)}.Validate()
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("Validate() error %q, want an error that quotes at most a prefix of a 1000-byte identity", err)
	}
}
