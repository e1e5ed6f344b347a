package cli

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/alecthomas/kong"

	"github.com/dpcalc/dpcalc/accounting"
)

// The exit codes of dpcalc. [Code] decides which one an error gets; nothing
// else does.
const (
	ExitOK          = 0   // success
	ExitFailed      = 1   // a computation that could not be completed, or a negative verdict
	ExitUsage       = 2   // bad input
	ExitInterrupted = 130 // stopped by SIGINT or SIGTERM (the context)
)

// Error is an error with its exit code. Flag names the flag it is about
// ("" when it is about the command line as a whole, or when the message
// names it: see [FlagOf]).
type Error struct {
	Code int
	Flag string
	Err  error
}

// Error returns the message.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the error with no exit code.
func (e *Error) Unwrap() error { return e.Err }

// Usagef is bad input (exit code 2), in a message that names the flag.
func Usagef(format string, args ...any) error {
	return &Error{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// usageAt is bad input about flag (for the web page, which marks the
// field).
func usageAt(flag, format string, args ...any) error {
	return &Error{Code: ExitUsage, Flag: flag, Err: fmt.Errorf(format, args...)}
}

// Exit gives err the exit code code.
func Exit(code int, err error) error { return &Error{Code: code, Err: err} }

// Failed is a negative outcome (exit code 1) of a command that printed its
// result: a row that failed, a claim that does not hold.
func Failed(format string, args ...any) error {
	return &Error{Code: ExitFailed, Err: fmt.Errorf(format, args...)}
}

// Code returns the exit code of err for a command run with ctx: 0 for nil,
// 130 when ctx was cancelled and err is its error, the code of an *Error,
// 2 for a parse error of the command line, else 1.
func Code(ctx context.Context, err error) int {
	if err == nil {
		return ExitOK
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return ExitInterrupted
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var pe *kong.ParseError
	if errors.As(err, &pe) {
		return ExitUsage
	}
	return ExitFailed
}

// flagWord is the first flag a message names.
var flagWord = regexp.MustCompile(`--([a-z][a-z0-9-]*)`)

// FlagOf returns the flag err is about: the *Error's Flag, else the first
// flag its message names ("" if none).
func FlagOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Flag != "" {
		return e.Flag
	}
	if err == nil {
		return ""
	}
	if m := flagWord.FindStringSubmatch(err.Error()); m != nil {
		return m[1]
	}
	return ""
}

// flagErr turns a library ParamError into a usage error that names the
// flag of the parameter.
func flagErr(err error) error {
	if err == nil {
		return nil
	}
	var pe *accounting.ParamError
	if errors.As(err, &pe) {
		return usageAt(pe.Name, "invalid --%s: %s, want %s", pe.Name, pe.ValueText(), pe.Want)
	}
	return err
}

// checkFlag is flagErr naming flag name.
func checkFlag(name string, err error) error {
	var pe *accounting.ParamError
	if errors.As(err, &pe) {
		return usageAt(name, "invalid --%s: %s, want %s", name, pe.ValueText(), pe.Want)
	}
	return err
}

// FlagError is flagErr for the command line's own commands.
func FlagError(err error) error { return flagErr(err) }

// CheckFlag is checkFlag for the command line's own commands.
func CheckFlag(name string, err error) error { return checkFlag(name, err) }

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
