package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// blockedWriter blocks every write until open is closed.
type blockedWriter struct {
	open chan struct{}
	buf  bytes.Buffer // written by the sink's one goroutine, read after close
}

func (w *blockedWriter) Write(p []byte) (int, error) {
	<-w.open
	return w.buf.Write(p)
}

// TestLogSinkDropsAndCountsWhileStderrStalls: while stderr takes no
// writes, log lines are queued up to logSinkLimit and the rest dropped,
// without blocking the caller; once stderr takes writes again, the queued
// lines come out in order, then the count of those dropped, where they
// went missing, then the lines after.
func TestLogSinkDropsAndCountsWhileStderrStalls(t *testing.T) {
	w := &blockedWriter{open: make(chan struct{})}
	sink := newLogSink(w, func(n int) []byte { return []byte(strings.Repeat("dropped ", n) + "\n") })
	const size = 100 << 10
	fits := logSinkLimit / size
	for i := range fits + 2 { // two too many
		line := append(bytes.Repeat([]byte{byte('a' + i)}, size-1), '\n')
		if n, err := sink.Write(line); n != len(line) || err != nil {
			t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(line))
		}
	}
	close(w.open)
	_, _ = sink.Write([]byte("after\n"))
	sink.close()
	lines := strings.Split(strings.TrimSuffix(w.buf.String(), "\n"), "\n")
	if len(lines) != fits+2 {
		t.Fatalf("got %d lines, want %d: %d queued, the note and the line after", len(lines), fits+2, fits)
	}
	for i, l := range lines[:fits] {
		if len(l) != size-1 || l[0] != byte('a'+i) {
			t.Errorf("line %d is %.10q…, want the %d-th written", i, l, i)
		}
	}
	if got := lines[fits]; got != "dropped dropped " {
		t.Errorf("note = %q, want the count of the 2 lines dropped", got)
	}
	if got := lines[fits+1]; got != "after" {
		t.Errorf("last line = %q, want the line written once stderr took writes again", got)
	}
}

// TestLogSinkCountsDropsAtClose: lines dropped last are counted when the
// sink closes.
func TestLogSinkCountsDropsAtClose(t *testing.T) {
	w := &blockedWriter{open: make(chan struct{})}
	sink := newLogSink(w, func(n int) []byte { return []byte("dropped\n") })
	big := make([]byte, logSinkLimit)
	big[len(big)-1] = '\n'
	_, _ = sink.Write(big)
	_, _ = sink.Write([]byte("lost\n"))
	close(w.open)
	sink.close()
	if !strings.HasSuffix(w.buf.String(), "\ndropped\n") {
		t.Errorf("the output ends %q, want the note of the line dropped", w.buf.String()[len(big)-1:])
	}
}

// failingWriter fails every write, as a write to a pipe whose reader has
// gone does (EPIPE, with SIGPIPE ignored).
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("write |1: broken pipe")
}

// TestLogSinkWriteErrorsStopNothing: lines go on being taken after stderr
// fails, and the sink closes.
func TestLogSinkWriteErrorsStopNothing(t *testing.T) {
	w := &failingWriter{}
	sink := newLogSink(w, func(int) []byte { return nil })
	for range 3 {
		if _, err := sink.Write([]byte("x\n")); err != nil {
			t.Fatal(err)
		}
	}
	sink.close()
	if w.n != 3 {
		t.Errorf("%d writes reached stderr, want 3", w.n)
	}
}

// TestRunLoggerDropNoteIsALogLine: the note of the lines dropped is a log
// line in --log-format, so that a collector parsing JSON takes it.
func TestRunLoggerDropNoteIsALogLine(t *testing.T) {
	w := &blockedWriter{open: make(chan struct{})}
	log, closeLog, err := newRunLogger(w, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	log.Info(strings.Repeat("x", logSinkLimit-100)) // the line is some 60 bytes longer
	log.Info("lost")
	close(w.open)
	closeLog()
	lines := strings.Split(strings.TrimSuffix(w.buf.String(), "\n"), "\n")
	var note struct {
		Level, Msg string
		Dropped    int
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &note); err != nil || note.Level != "WARN" || note.Dropped != 1 {
		t.Errorf("the last line is %q (%v), want a JSON warning with dropped=1", lines[len(lines)-1], err)
	}
}
