//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"os"

	"github.com/leasehold/leasehold/runner"
)

// output is where the command writes one of its streams: leasehold's own
// file (its stdout or stderr) itself, or the write end of a pipe whose read
// end leasehold copies to a writer that is not a file (a test's buffer) or,
// with --progress-on-stdout, reads for progress.
type output struct {
	child *os.File      // given to the command
	r     *os.File      // the pipe's read end; nil when child is leasehold's own file
	w     io.Writer     // where r is copied to
	done  chan struct{} // closed when the copy ended; nil without a pipe
}

func newOutput(w io.Writer, progress bool) (*output, error) {
	if f, ok := w.(*os.File); ok && !progress {
		return &output{child: f}, nil
	}
	r, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	return &output{child: pw, r: r, w: w, done: make(chan struct{})}, nil
}

// abort closes the pipe of a command that did not start.
func (o *output) abort() {
	if o.r != nil {
		o.r.Close()
		o.child.Close()
	}
}

// copy closes leasehold's copy of the write end, now that the command has
// its own, and copies what the command writes until every process holding
// the write end has closed it. With progress, each line counts as progress
// of the term ctx.
func (o *output) copy(ctx context.Context, progress bool) {
	if o.r == nil {
		return
	}
	o.child.Close()
	go func() {
		defer close(o.done)
		defer o.r.Close()
		buf := make([]byte, 32<<10)
		for {
			n, err := o.r.Read(buf)
			if n > 0 {
				_, _ = o.w.Write(buf[:n])
				if progress && bytes.IndexByte(buf[:n], '\n') >= 0 {
					runner.Progress(ctx)
				}
			}
			if err != nil {
				return
			}
		}
	}()
}
