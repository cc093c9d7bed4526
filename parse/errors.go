package parse

import (
	"errors"
	"strconv"
	"strings"
)

// Errors of [Policies] and [Limits]. Every error they return is a
// *[FieldError] that matches [ErrMalformed] and one of the more specific
// sentinels under [errors.Is].
var (
	// ErrMalformed matches every error of this package: the field is
	// malformed and must be ignored as a whole (draft-11 §7, RFC 9651 §2.2).
	ErrMalformed = errors.New("parse: malformed field")

	// ErrSyntax reports a value that is not an RFC 9651 List.
	ErrSyntax = errors.New("parse: not a structured field list")

	// ErrMissing reports a list member without a required parameter
	// (q in RateLimit-Policy, r in RateLimit).
	ErrMissing = errors.New("parse: required parameter missing")

	// ErrInvalid reports a member or parameter of the wrong type or range:
	// an identifier that is not a String, an Inner List, a negative number,
	// w=0, a pk that is not a Byte Sequence, a qu that is not a non-empty
	// String.
	ErrInvalid = errors.New("parse: invalid value")
)

// A FieldError records why a RateLimit or RateLimit-Policy field was
// rejected and where.
type FieldError struct {
	Field  string // field name: "RateLimit-Policy" or "RateLimit"
	Member int    // index of the offending list member; -1 for a syntax error
	Param  string // parameter at fault, such as "q" or "w"; "" for the member itself
	Err    error  // ErrSyntax, ErrMissing or ErrInvalid
}

// Error describes the fault: the field, the member and parameter when
// known, and the cause.
func (e *FieldError) Error() string {
	s := "parse: " + e.Field
	if e.Member >= 0 {
		s += ": member " + strconv.Itoa(e.Member)
	}
	if e.Param != "" {
		s += ": parameter " + e.Param
	}
	msg := "malformed"
	if e.Err != nil {
		msg = strings.TrimPrefix(e.Err.Error(), "parse: ")
	}
	return s + ": " + msg
}

// Unwrap returns e.Err.
func (e *FieldError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrMalformed], which every FieldError matches.
func (e *FieldError) Is(target error) bool { return target == ErrMalformed }
