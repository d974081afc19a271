package certs

import (
	"fmt"
	"strings"
)

// FlagError is bad input named by the flag that carries it, so that the message tells the user which
// part of the command line to fix: `--hosts 999.1.1.1 looks like an IPv4 address but is not one`.
// `apictl serve` uses the same flag names for the settings it shares with `apictl certs`.
type FlagError struct {
	Flag    string
	Value   string
	Message string
}

// Error reads like the flag errors of pkg/flags.
func (e *FlagError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("--%s %s", e.Flag, e.Message)
	}
	v := e.Value
	if strings.ContainsAny(v, " \t\n\"'") {
		v = fmt.Sprintf("%q", v)
	}
	return fmt.Sprintf("--%s %s %s", e.Flag, v, e.Message)
}

func flagErrorf(flag, value, format string, args ...any) *FlagError {
	return &FlagError{Flag: flag, Value: value, Message: fmt.Sprintf(format, args...)}
}
