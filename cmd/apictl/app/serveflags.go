package app

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/apictl/apictl/pkg/flags"
)

// serverFlags are the options of `apictl serve`, bound to a command's flags. serve, flags validate and
// flags show all bind them the same way, so they accept the same command lines and config sources.
type serverFlags struct {
	options *flags.ServerOptions
	sets    flags.NamedFlagSets
}

// bindServerFlags adds every serve section to cmd and prints them as sections in its help.
func bindServerFlags(cmd *cobra.Command) *serverFlags {
	sf := &serverFlags{options: flags.NewServerOptions()}
	sf.sets = sf.options.Flags()
	sf.sets.FlagSet(flags.SectionGlobal).BoolP("help", "h", false, "help for "+cmd.Name())
	for _, name := range sf.sets.Order {
		cmd.Flags().AddFlagSet(sf.sets.FlagSets[name])
	}
	registerValueCompletions(cmd)
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
		out := c.OutOrStdout()
		fmt.Fprintf(out, "%s\n\nUsage:\n  %s\n", c.Long, c.UseLine())
		printSubcommandFlags(out, c, sf)
		_ = sf.sets.PrintSections(out, 0)
	})
	return sf
}

// printSubcommandFlags prints the command's own flags (such as -o) that are not serve settings.
func printSubcommandFlags(w io.Writer, c *cobra.Command, sf *serverFlags) {
	own := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if sf.sets.SectionOf(f.Name) == "" {
			own.AddFlag(f)
		}
	})
	if own.HasFlags() {
		fmt.Fprintf(w, "\nFlags:\n\n%s", own.FlagUsages())
	}
}

// evaluate merges the environment and config file into the flags, completes and validates.
func (sf *serverFlags) evaluate(cmd *cobra.Command) flags.Evaluation {
	return flags.Evaluate(sf.options, &sf.sets, cmd.Flags())
}

// registerValueCompletions lets shells complete the flags whose values come from a fixed set, and
// the file and directory flags with paths.
func registerValueCompletions(cmd *cobra.Command) {
	fixed := map[string][]string{
		"authorization-mode": flags.AuthorizationModes(),
		"log-format":         {flags.LogFormatText, flags.LogFormatJSON},
		"tls-min-version":    flags.TLSVersionNames(),
		"tls-cipher-suites":  flags.CipherSuiteNames(),
		// client-go has no other lock left.
		"leader-elect-resource-lock": {"leases"},
	}
	for name, values := range fixed {
		_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
	for _, name := range []string{"data-dir", "cert-dir"} {
		_ = cmd.MarkFlagDirname(name)
	}
	for _, name := range []string{"tls-cert-file", "tls-private-key-file", "client-ca-file", "requestheader-client-ca-file", "etcd-cafile", "etcd-certfile", "etcd-keyfile"} {
		_ = cmd.MarkFlagFilename(name, "crt", "pem", "key", "cert")
	}
	for _, name := range []string{"config", "api-config"} {
		_ = cmd.MarkFlagFilename(name, "yaml", "yml", "json")
	}
	for _, name := range []string{"token-auth-file", "authorization-policy-file"} {
		_ = cmd.MarkFlagFilename(name)
	}
}
