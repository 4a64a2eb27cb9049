package main

import (
	"io"
	"sync"
	"time"
)

// logSink is where leasehold run's logger writes: a writer that never
// blocks its caller. Each Write (one log line: slog's handlers write a
// record at once) is queued, up to logSinkLimit bytes, and one goroutine
// writes the queue to stderr in order. When the queue is full (stderr is a
// pipe nobody reads, a log collector that stalled) the line is dropped and
// counted, and the count is written where the lines went missing, before
// the next line that fits (note formats it).
//
// The loggers' callers are on the paths that stop the command: the
// supervisor's SIGTERM and SIGKILL, the runner's step-down. A log write
// that waited on a stalled stderr would keep the command running past its
// lease (rules 1 and 14; red team 14). A write that fails (EPIPE, once the
// reader has gone: leasehold ignores SIGPIPE) is left: nothing waits on it.
type logSink struct {
	w    io.Writer
	note func(dropped int) []byte

	mu      sync.Mutex
	cond    sync.Cond // signalled when a line is queued, and by close
	queue   [][]byte
	queued  int // bytes in queue
	dropped int // lines dropped since the last one queued
	closed  bool
	done    chan struct{} // closed when the queue is written out after close
}

// logSinkLimit is how many bytes of log lines wait for stderr at most.
const logSinkLimit = 1 << 20

// newLogSink returns a sink writing to w, and starts its writer. note
// formats the line that says how many lines were dropped.
func newLogSink(w io.Writer, note func(dropped int) []byte) *logSink {
	s := &logSink{w: w, note: note, done: make(chan struct{})}
	s.cond.L = &s.mu
	go s.drain()
	return s
}

// Write queues a copy of p, or drops it if the queue is full or the sink
// closed. It never blocks on w, and never fails.
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.queued+len(p) > logSinkLimit {
		s.dropped++
		return len(p), nil
	}
	s.flushNote()
	s.push(append([]byte(nil), p...))
	return len(p), nil
}

// flushNote queues the count of lines dropped since the last queued, if
// any: it may go past the limit by one line.
func (s *logSink) flushNote() {
	if s.dropped > 0 {
		s.push(s.note(s.dropped))
		s.dropped = 0
	}
}

func (s *logSink) push(line []byte) {
	s.queue = append(s.queue, line)
	s.queued += len(line)
	s.cond.Signal()
}

// drain writes the queued lines to w, one at a time, in order.
func (s *logSink) drain() {
	defer close(s.done)
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for len(s.queue) == 0 && !s.closed {
			s.cond.Wait()
		}
		if len(s.queue) == 0 {
			return
		}
		line := s.queue[0]
		s.mu.Unlock()
		_, _ = s.w.Write(line)
		s.mu.Lock()
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.queued -= len(line)
	}
}

// closeWait bounds how long close waits for the queued lines: a stderr
// that takes none must not keep leasehold from exiting (red team 15).
const closeWait = 2 * time.Second

// close stops taking lines, and returns once those queued are written,
// with the count of those dropped last, so that they come before what
// leasehold prints as it exits; or after closeWait, if they cannot be.
func (s *logSink) close() {
	s.mu.Lock()
	if !s.closed {
		s.flushNote()
		s.closed = true
		s.cond.Signal()
	}
	s.mu.Unlock()
	select {
	case <-s.done:
	case <-time.After(closeWait):
	}
}
