//go:build linux

package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// imageLayoutVar names the OCI image layout that TestImage checks:
// scripts/image writes it (dist/leasehold_VERSION_image_oci), and
// scripts/test sets the variable.
const imageLayoutVar = "LEASEHOLD_IMAGE_LAYOUT"

// ociDescriptor, ociIndex, ociManifest and ociConfig are the parts of the
// OCI image spec the test reads.
type ociDescriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Platform  *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform"`
}

type ociIndex struct {
	Manifests []ociDescriptor `json:"manifests"`
}

type ociManifest struct {
	Config ociDescriptor   `json:"config"`
	Layers []ociDescriptor `json:"layers"`
}

type ociConfig struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Config       struct {
		User       string            `json:"User"`
		Entrypoint []string          `json:"Entrypoint"`
		WorkingDir string            `json:"WorkingDir"`
		Labels     map[string]string `json:"Labels"`
	} `json:"config"`
}

// ociLayout reads an OCI image layout.
type ociLayout struct {
	t   *testing.T
	dir string
}

func (l ociLayout) blob(d ociDescriptor, v any) {
	l.t.Helper()
	b, err := os.ReadFile(l.blobPath(d))
	if err != nil {
		l.t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		l.t.Fatalf("%s (%s): %v", d.Digest, d.MediaType, err)
	}
}

func (l ociLayout) blobPath(d ociDescriptor) string {
	algo, hex, _ := strings.Cut(d.Digest, ":")
	return filepath.Join(l.dir, "blobs", algo, hex)
}

// platforms returns the image manifests by "os/arch", following nested
// indexes (crane writes the image's index inside the layout's).
func (l ociLayout) platforms() map[string]ociDescriptor {
	l.t.Helper()
	var top ociIndex
	b, err := os.ReadFile(filepath.Join(l.dir, "index.json"))
	if err == nil {
		err = json.Unmarshal(b, &top)
	}
	if err != nil {
		l.t.Fatalf("%s: not an OCI image layout: %v", l.dir, err)
	}
	out := map[string]ociDescriptor{}
	var walk func([]ociDescriptor)
	walk = func(ds []ociDescriptor) {
		for _, d := range ds {
			switch {
			case strings.HasSuffix(d.MediaType, "image.index.v1+json") || strings.HasSuffix(d.MediaType, "manifest.list.v2+json"):
				var idx ociIndex
				l.blob(d, &idx)
				walk(idx.Manifests)
			case d.Platform != nil:
				out[d.Platform.OS+"/"+d.Platform.Architecture] = d
			}
		}
	}
	walk(top.Manifests)
	return out
}

// unpack extracts the layers of m into dir, in order, as a container
// runtime would (no whiteouts: the image has one layer on an empty base).
func (l ociLayout) unpack(m ociManifest, dir string) {
	l.t.Helper()
	for _, layer := range m.Layers {
		f, err := os.Open(l.blobPath(layer))
		if err != nil {
			l.t.Fatal(err)
		}
		defer f.Close()
		var r io.Reader = f
		if strings.HasSuffix(layer.MediaType, "gzip") {
			if r, err = gzip.NewReader(f); err != nil {
				l.t.Fatalf("layer %s: %v", layer.Digest, err)
			}
		}
		tr := tar.NewReader(r)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				l.t.Fatalf("layer %s: %v", layer.Digest, err)
			}
			name := filepath.Clean(h.Name)
			if !filepath.IsLocal(name) {
				l.t.Fatalf("layer %s: entry %q leaves the root", layer.Digest, h.Name)
			}
			path := filepath.Join(dir, name)
			switch h.Typeflag {
			case tar.TypeDir:
				err = os.MkdirAll(path, os.FileMode(h.Mode).Perm())
			case tar.TypeReg:
				var out *os.File
				if out, err = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode).Perm()); err == nil {
					_, err = io.Copy(out, tr)
					err = errors.Join(err, out.Close())
				}
			default:
				l.t.Fatalf("layer %s: %q is of tar type %q, which this test does not unpack", layer.Digest, h.Name, h.Typeflag)
			}
			if err == nil {
				// Modes as in the image (the umask may have narrowed them),
				// owners too where this test may set them.
				mode := os.FileMode(h.Mode).Perm()
				if h.Mode&0o1000 != 0 {
					mode |= os.ModeSticky
				}
				err = os.Chmod(path, mode)
				if os.Geteuid() == 0 {
					err = errors.Join(err, os.Lchown(path, h.Uid, h.Gid))
				}
			}
			if err != nil {
				l.t.Fatalf("unpack %s: %v", h.Name, err)
			}
		}
	}
}

// caFile is where the image carries its CA roots, as PEM: the first
// file Go's crypto/x509 reads on Linux.
const caFile = "etc/ssl/certs/ca-certificates.crt"

// imageRoots returns how many certificates the PEM file at path holds,
// failing t on one that does not parse.
func imageRoots(t *testing.T, path string) int {
	t.Helper()
	rest, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the image's CA roots: %v", err)
	}
	n := 0
	for {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return n
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			t.Fatalf("the image's %s: certificate %d: %v", caFile, n+1, err)
		}
		n++
	}
}

// TestImage checks the container image that scripts/image built: both
// platforms are there, it runs as a non-root user with leasehold as its
// entry point, and the binary it holds (unpacked, and run chrooted into
// the image as its user when the test runs as root) says its version,
// finds Mozilla's CA roots in the image (the binary carries none),
// takes a lease on MinIO and reports it with leasehold status.
func TestImage(t *testing.T) {
	dir := os.Getenv(imageLayoutVar)
	if dir == "" {
		t.Skipf("container image: set %s to an OCI image layout (scripts/release && scripts/image write dist/leasehold_VERSION_image_oci)", imageLayoutVar)
	}
	l := ociLayout{t: t, dir: dir}
	platforms := l.platforms()
	for _, want := range []string{"linux/amd64", "linux/arm64"} {
		if _, ok := platforms[want]; !ok {
			t.Errorf("the image has no %s manifest (has %v)", want, platforms)
		}
	}
	here := "linux/" + runtime.GOARCH
	desc, ok := platforms[here]
	if !ok {
		t.Fatalf("no %s image to run here", here)
	}
	var m ociManifest
	l.blob(desc, &m)
	var cfg ociConfig
	l.blob(m.Config, &cfg)
	if cfg.OS+"/"+cfg.Architecture != here {
		t.Errorf("the %s manifest's config says %s/%s", here, cfg.OS, cfg.Architecture)
	}
	uid, gid := nonRootUser(t, cfg.Config.User)
	if strings.Join(cfg.Config.Entrypoint, " ") != "/leasehold" {
		t.Errorf("entry point %q, want [/leasehold]", cfg.Config.Entrypoint)
	}
	version := cfg.Config.Labels["org.opencontainers.image.version"]
	if version == "" {
		t.Errorf("no org.opencontainers.image.version label: %v", cfg.Config.Labels)
	}

	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil { // the image's user must reach into it
		t.Fatal(err)
	}
	l.unpack(m, root)
	if n := imageRoots(t, filepath.Join(root, caFile)); n < 100 {
		t.Errorf("the image's %s holds %d CA roots, want Mozilla's (over 100): the binary has none of its own", caFile, n)
	}

	e := newE2E(t)
	e.bin = filepath.Join(root, "leasehold")
	// The container's environment has no CA file settings of the build
	// machine's: TLS must work from the image's roots alone.
	e.env = slices.DeleteFunc(e.env, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == "AWS_CA_BUNDLE" || k == "SSL_CERT_FILE" || k == "SSL_CERT_DIR"
	})
	if os.Geteuid() == 0 {
		// As the container runs it: inside the image's files only (no
		// shell, no build machine's /etc/ssl), as its user, in its working
		// directory.
		e.bin = "/leasehold"
		// The one device file a container runtime provides that leasehold
		// uses: the command's stdin.
		if err := os.Mkdir(filepath.Join(root, "dev"), 0o755); err != nil {
			t.Fatal(err)
		}
		null := filepath.Join(root, "dev/null")
		if err := errors.Join(unix.Mknod(null, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))), os.Chmod(null, 0o666)); err != nil {
			t.Fatalf("mknod /dev/null in the image's root: %v", err)
		}
		e.sys = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	} else {
		t.Logf("not root: running %s as this user, outside a chroot", e.bin)
	}
	p := e.start("leasehold version", "version")
	if code := p.wait(t, time.Minute); code != 0 || !strings.Contains(p.stdout.String(), "version  "+version+"\n") {
		t.Fatalf("leasehold version from the image: exit %d, stdout:\n%s\nwant version %s", code, p.stdout, version)
	}

	// The image's leasehold takes the lease once, running itself as the
	// command (the image has nothing else to run), then reports it.
	url := e.leaseURL(e.endpoint)
	if code, stderr := e.run(time.Minute, "run", "--once", "--identity", "in-the-image", "--lease", url, "--", "/leasehold", "version"); code != 0 {
		t.Fatalf("leasehold run --once from the image: exit %d; stderr:\n%s", code, stderr)
	}
	p = e.start("leasehold status", "status", "--lease", url, "-o", "json")
	if code := p.wait(t, time.Minute); code != 0 {
		t.Fatalf("leasehold status from the image: exit %d; stderr:\n%s", code, p.stderr)
	}
	var rep statusReport
	if err := json.Unmarshal([]byte(p.stdout.String()), &rep); err != nil {
		t.Fatalf("leasehold status -o json: %v\n%s", err, p.stdout)
	}
	if rep.State != "released" || rep.Holder != "in-the-image" || rep.Token != 1 {
		t.Errorf("status after the image's leasehold ran once: %+v, want released by in-the-image with token 1", rep)
	}
}

// nonRootUser parses an image config's User ("uid" or "uid:gid", numeric
// as a runtime needs without /etc/passwd lookups) and fails the test if it
// is empty or root.
func nonRootUser(t *testing.T, user string) (uid, gid uint32) {
	t.Helper()
	u, g, hasGroup := strings.Cut(user, ":")
	uid64, err := strconv.ParseUint(u, 10, 32)
	if err != nil || uid64 == 0 {
		t.Fatalf("the image's User is %q: want a numeric non-root user", user)
	}
	gid64 := uid64
	if hasGroup {
		if gid64, err = strconv.ParseUint(g, 10, 32); err != nil || gid64 == 0 {
			t.Fatalf("the image's User is %q: want a numeric non-root group", user)
		}
	}
	return uint32(uid64), uint32(gid64)
}
