package gcslease

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"cloud.google.com/go/auth/credentials"

	"github.com/leasehold/leasehold/lease"
)

// emulatorHostEnv is the variable that points the Cloud Storage client at
// an emulator (fake-gcs-server), which it then reaches without credentials.
const emulatorHostEnv = "STORAGE_EMULATOR_HOST"

// emulatorEndpoint is the JSON API's base URL at host, the value of
// STORAGE_EMULATOR_HOST: host:port, reached over plain HTTP, or a URL with
// its scheme (http or https) and nothing after its host but "/", as the
// Cloud Storage client libraries read the variable. Anything else is
// refused here, naming the variable: a space or newline left around the
// value, a path, a query or a fragment (even an empty one), an empty port
// or one out of range (the client panicked on some, dialled port 80 for
// an empty port, and retried the others for ever).
func emulatorEndpoint(host string) (string, error) {
	raw := host
	if !strings.Contains(host, "://") {
		raw = "http://" + host
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || strings.ContainsAny(host, "?#") || strings.TrimSpace(host) != host ||
		strings.HasSuffix(u.Host, ":") || !portOK(u.Port()) {
		return "", &lease.OptionError{Pkg: "gcslease", Field: emulatorHostEnv, Value: strconv.Quote(host), Reason: "must be host:port or a URL such as http://host:port, with nothing around it"}
	}
	u.Path = "/storage/v1/"
	return u.String(), nil
}

// portOK says whether port, as url.URL.Port returns it, is none or a TCP
// port.
func portOK(port string) bool {
	if port == "" {
		return true
	}
	n, err := strconv.Atoi(port)
	return err == nil && n > 0 && n < 1<<16
}

// Credentials implements driver.CredentialSource. For a client Open built,
// it finds Application Default Credentials as the client did and asks them
// for a token (from the metadata server or Google's token endpoint, not the
// store); with STORAGE_EMULATOR_HOST set there are none to find.
func (d *conn) Credentials(ctx context.Context) (string, error) {
	switch {
	case !d.adc:
		return "the storage.Service given in gcslease.Options (its credentials are its own)", nil
	case d.emulator != "": // as Open found it
		return fmt.Sprintf("none: %s=%s points the client at an emulator, reached without credentials", emulatorHostEnv, d.emulator), nil
	}
	creds, err := credentials.DetectDefault(&credentials.DetectOptions{Scopes: []string{"https://www.googleapis.com/auth/devstorage.read_write"}})
	if err == nil {
		_, err = creds.Token(ctx)
	}
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case err != nil:
		return "", fmt.Errorf("%w: gcslease: no usable Application Default Credentials were found; looked in GOOGLE_APPLICATION_CREDENTIALS (%s), gcloud's ~/.config/gcloud/application_default_credentials.json, and the metadata server of Google Cloud: %w",
			lease.ErrPermission, orNotSet(os.Getenv("GOOGLE_APPLICATION_CREDENTIALS")), err)
	}
	var file struct {
		Type string `json:"type"`
	}
	if b := creds.JSON(); len(b) > 0 && json.Unmarshal(b, &file) == nil && file.Type != "" {
		return fmt.Sprintf("Application Default Credentials: a %s credentials file (GOOGLE_APPLICATION_CREDENTIALS: %s)", file.Type, orNotSet(os.Getenv("GOOGLE_APPLICATION_CREDENTIALS"))), nil
	}
	return "Application Default Credentials: the metadata server's service account (Cloud Run, GKE, Compute Engine)", nil
}

func orNotSet(v string) string {
	if v == "" {
		return "not set"
	}
	return v
}
