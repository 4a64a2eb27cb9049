package awsdriver

import (
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// PlainBodies wraps a client's HTTP client so that request bodies reach
// net/http as plain io.ReadClosers. It works around a race between
// smithy-go and net/http that breaks answered requests:
//
// smithy-go closes a request's body as soon as the response arrives, and
// once closed, the WriteTo of its body wrapper returns io.EOF. net/http's
// transport, after it has written Content-Length bytes of a body, reads the
// body once more to check that nothing is left; that read goes through
// WriteTo when the body has one. When the server answers before the
// transport's writer gets to that read (a fast server, a busy CPU), the
// writer gets io.EOF, takes it for a failed write, and closes the
// connection while the response's body is still being read: the call
// fails with "deserialization failed ... use of closed network
// connection" although the server answered. Without WriteTo, the extra
// read is a Read, which returns io.EOF after Close: the end of the body,
// as it should be. (Seen against moto under load, on about one GetItem in
// a few thousand.)
func PlainBodies(hc aws.HTTPClient) aws.HTTPClient {
	if hc == nil {
		hc = http.DefaultClient
	}
	if _, ok := hc.(plainBodies); ok {
		return hc
	}
	return plainBodies{next: hc}
}

type plainBodies struct{ next aws.HTTPClient }

func (p plainBodies) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = plainBody{r.Body}
	}
	return p.next.Do(r)
}

// plainBody hides every method of its body but Read and Close.
type plainBody struct{ rc io.ReadCloser }

func (b plainBody) Read(p []byte) (int, error) { return b.rc.Read(p) }
func (b plainBody) Close() error               { return b.rc.Close() }
