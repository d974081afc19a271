// Package app holds apictl's commands. Each parses its flags, calls a package under pkg/, and prints;
// Main runs the whole CLI in-process so that tests can too.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apictl/apictl/pkg/output"
)

// Exit codes. Scripts may rely on them.
const (
	// ExitOK means the command did what was asked (or found the configuration valid).
	ExitOK = 0
	// ExitFailure means the command ran but failed or found problems.
	ExitFailure = 1
	// ExitUsage means the command line itself was wrong: an unknown command or flag, a bad argument.
	ExitUsage = 2
)

// Streams are where commands read and write. Packages receive these writers, never os.Stdout.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// OutIsTerminal selects aligned tables (true) or tab-separated rows for pipes (false).
	OutIsTerminal bool
}

// StandardStreams returns the process's standard streams.
func StandardStreams() Streams {
	return Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, OutIsTerminal: isTerminal(os.Stdout)}
}

func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// usageError marks a mistake in the command line, which exits 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitError carries a chosen exit code for a failure already reported to the user.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Main runs apictl with args and returns its exit code.
func Main(ctx context.Context, args []string, streams Streams) int {
	root := NewRootCmd(streams)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	var exit exitError
	if errors.As(err, &exit) {
		return exit.code
	}
	// kubectl's prefix, which the commands' own problem lines use too: one spelling on stderr.
	fmt.Fprintf(streams.ErrOut, "error: %v\n", err)
	var usage usageError
	if errors.As(err, &usage) {
		fmt.Fprintf(streams.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return ExitUsage
	}
	return ExitFailure
}

// NewRootCmd builds the command tree.
func NewRootCmd(streams Streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "apictl",
		Short: "A Kubernetes-style API server that bootstraps its own TLS and explains its own configuration",
		Long: "apictl serves a kubectl-compatible API on etcd (apictl serve), prints the routes that server installs\n" +
			"(apictl routes), bootstraps the certificates it needs (apictl certs) and checks its configuration\n" +
			"before anyone deploys it (apictl flags).",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(
		newServeCmd(streams, nil),
		newRoutesCmd(streams),
		newCertsCmd(streams),
		newFlagsCmd(streams),
		newSnapshotCmd(streams),
		newStatusCmd(streams, nil),
		newVersionCmd(streams),
	)
	return root
}

// noArgs rejects arguments as a usage error, suggesting a subcommand for a likely typo.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.HasSubCommands() {
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2
		}
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
		}
	} else {
		msg = fmt.Sprintf("%q takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return usageError{errors.New(msg)}
}

// groupCmd is a command that only holds subcommands: alone it prints help, with an unknown
// subcommand it is a usage error.
func groupCmd(use, short string, children ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(children...)
	return cmd
}

// addOutputFlag registers -o/--output with the formats a command offers, and completes them.
func addOutputFlag(cmd *cobra.Command, format *string, formats ...string) {
	cmd.Flags().StringVarP(format, "output", "o", formats[0], "Output format: "+strings.Join(formats, ", "))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

// parseFormat checks -o against the formats a command offers; anything else is a usage error.
func parseFormat(format string, formats []output.Format) (output.Format, error) {
	f, err := output.ParseFormat(format, formats...)
	if err != nil {
		return "", usageError{err}
	}
	return f, nil
}

// formatNames turns output formats into the strings addOutputFlag takes.
func formatNames(formats []output.Format) []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	return names
}
