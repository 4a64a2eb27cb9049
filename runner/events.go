package runner

import (
	"errors"
	"fmt"
)

// Reason says why leadership ended.
type Reason int

const (
	// TaskEnded: the task returned by itself.
	TaskEnded Reason = iota + 1
	// LeaseLost: a renewal found the lease taken over or released, or the
	// record can no longer be renewed.
	LeaseLost
	// DeadlinePassed: no renewal succeeded within RenewDeadline of the last
	// successful one being sent, so the leader stepped down before its lease
	// could be taken over.
	DeadlinePassed
	// Unhealthy: the health check failed HealthThreshold times in a row, or
	// the task made no progress within StallTimeout.
	Unhealthy
	// Stopped: the context given to Run or RunOnce ended.
	Stopped
	// HandedOff: a candidate whose Config.Prefer orders after the leader's
	// announced itself, or an operator asked (AnnotationHandoffTo), and the
	// leader handed the lease to the candidate or the contender named
	// (Demotion.Successor) once its task had returned; or, asked to hand
	// it to any other contender, released it and waited CoolDown.
	HandedOff
)

var reasonNames = map[Reason]string{
	TaskEnded:      "task ended",
	LeaseLost:      "lease lost",
	DeadlinePassed: "renew deadline passed",
	Unhealthy:      "unhealthy",
	Stopped:        "stopped",
	HandedOff:      "handed off",
}

// String names the reason in words, for logs and messages: "lease lost".
func (r Reason) String() string { return nameOf(reasonNames, r, "Reason") }

// nameOf is v's name in names, or typ(v) for a value that has none.
func nameOf[T ~int](names map[T]string, v T, typ string) string {
	if s, ok := names[v]; ok {
		return s
	}
	return fmt.Sprintf("%s(%d)", typ, int(v))
}

// Demotion describes the end of one term of leadership.
type Demotion struct {
	// Reason says why the term ended.
	Reason Reason
	// Token is the fencing token of the term that ended.
	Token uint64
	// Err is the task's error for TaskEnded, and the cause otherwise (the
	// renewal error, the failed health check); nil when there is none.
	Err error
	// Released reports whether the lease was released afterwards (for
	// HandedOff: handed to Successor).
	Released bool
	// Successor is the contender a HandedOff term was handed to; "" when
	// it was released for any other.
	Successor string
}

// String describes the demotion in a sentence, for logs and messages.
func (d Demotion) String() string {
	if d.Err == nil {
		return fmt.Sprintf("leadership (token %d) ended: %s", d.Token, d.Reason)
	}
	return fmt.Sprintf("leadership (token %d) ended: %s: %v", d.Token, d.Reason, d.Err)
}

// stepDown is the cause with which the renew loop or the health watch ends
// a term.
type stepDown struct {
	reason    Reason
	err       error
	successor string // HandedOff's
}

func (s *stepDown) Error() string { return s.reason.String() }

// demotionOf turns the cause that ended a term into a Demotion.
func demotionOf(cause error, token uint64) Demotion {
	var sd *stepDown
	if errors.As(cause, &sd) {
		return Demotion{Reason: sd.reason, Token: token, Err: sd.err, Successor: sd.successor}
	}
	return Demotion{Reason: Stopped, Token: token}
}
