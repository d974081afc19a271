package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/output"
)

func newFlagsCmd(streams Streams) *cobra.Command {
	return groupCmd("flags", "List, validate and show the settings of apictl serve",
		newFlagsListCmd(streams),
		newFlagsValidateCmd(streams),
		newFlagsShowCmd(streams),
	)
}

func newFlagsListCmd(streams Streams) *cobra.Command {
	var section, format string
	cmd := &cobra.Command{
		Use:   "list [--section NAME] [-o table|json|yaml|markdown]",
		Short: "List every flag of apictl serve with its type, default and environment variable",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			f, err := parseFormat(format, flags.ListFormats)
			if err != nil {
				return err
			}
			fss := flags.NewServerOptions().Flags()
			infos := flags.Describe(&fss)
			if section != "" {
				infos, err = filterSection(infos, fss.Order, section)
				if err != nil {
					return usageError{err}
				}
			}
			return flags.WriteList(streams.Out, infos, f, streams.OutIsTerminal)
		},
	}
	cmd.Flags().StringVar(&section, "section", "", `Only list this section, such as "secure serving" or etcd`)
	addOutputFlag(cmd, &format, formatNames(flags.ListFormats)...)
	return cmd
}

func filterSection(infos []flags.FlagInfo, sections []string, name string) ([]flags.FlagInfo, error) {
	var out []flags.FlagInfo
	for _, info := range infos {
		if info.Section == name {
			out = append(out, info)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("unknown section %q: use one of %q", name, sections)
	}
	return out, nil
}

func newFlagsValidateCmd(streams Streams) *cobra.Command {
	return newEvaluateCmd(
		"validate [--config FILE] [serve flags...] [-o table|json|yaml]",
		"Run the checks apictl serve runs, starting nothing",
		"Validate a configuration of apictl serve: merge the flags, the APICTL_* environment and the --config\n"+
			"file, complete and validate them exactly as serve does, and report every problem at once.\n"+
			"Exit status: 0 valid, 1 invalid, 2 usage error.",
		func(_ *serverFlags, e flags.Evaluation, f output.Format) error {
			return flags.WriteValidation(streams.Out, e, f, streams.OutIsTerminal)
		})
}

func newFlagsShowCmd(streams Streams) *cobra.Command {
	return newEvaluateCmd(
		"show [--config FILE] [serve flags...] [-o table|json|yaml]",
		"Show the effective settings of apictl serve and where each came from",
		"Show every setting of apictl serve after merging flags, the APICTL_* environment and the --config file,\n"+
			"and completing defaults that follow from other settings, with each value's source: flag, environment,\n"+
			"config file or default. Problems are reported on stderr; the exit status is 1 when there are errors.",
		func(sf *serverFlags, e flags.Evaluation, f output.Format) error {
			if err := flags.WriteSettings(streams.Out, flags.Settings(&sf.sets, e.Sources), f, streams.OutIsTerminal); err != nil {
				return err
			}
			return flags.WriteProblems(streams.ErrOut, e)
		})
}

// newEvaluateCmd builds a command that takes serve's command line, evaluates it as serve would and
// reports on it; it exits 1 when the configuration is invalid.
func newEvaluateCmd(use, short, long string, report func(*serverFlags, flags.Evaluation, output.Format) error) *cobra.Command {
	var format string
	cmd := &cobra.Command{Use: use, Short: short, Long: long, Args: noArgs}
	addOutputFlag(cmd, &format, formatNames(flags.ReportFormats)...)
	sf := bindServerFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		f, err := parseFormat(format, flags.ReportFormats)
		if err != nil {
			return err
		}
		e := sf.evaluate(cmd)
		if err := report(sf, e, f); err != nil {
			return err
		}
		if !e.Valid() {
			return exitError{ExitFailure}
		}
		return nil
	}
	return cmd
}
