package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// timeline prints events with the time elapsed since it began.
type timeline struct {
	mu    sync.Mutex
	w     io.Writer
	began time.Time
}

func newTimeline(w io.Writer) *timeline {
	return &timeline{w: w, began: time.Now()}
}

func (tl *timeline) event(who, what, format string, args ...any) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	fmt.Fprintf(tl.w, "%7.2fs  %-9s %-12s %s\n", time.Since(tl.began).Seconds(), who, what, fmt.Sprintf(format, args...))
}

func (tl *timeline) heading(format string, args ...any) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	fmt.Fprintf(tl.w, "\n== %s\n", fmt.Sprintf(format, args...))
}
