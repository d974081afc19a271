package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/apictl/apictl/pkg/output"
	"github.com/apictl/apictl/pkg/version"
)

func newVersionCmd(streams Streams) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "version [-o text|json|yaml]",
		Short: "Print the version of apictl and of the Kubernetes API it serves",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			info := version.Get()
			switch format {
			case "text":
				_, err := fmt.Fprintf(streams.Out,
					"Version:    %s\nKubernetes: %s (served as %s)\nGit commit: %s\nTree state: %s\nBuild date: %s\nGo version: %s\nPlatform:   %s\n",
					info.Apictl(), info.Kubernetes(), info.GitVersion, orUnknown(info.GitCommit), orUnknown(info.GitTreeState), orUnknown(info.BuildDate),
					info.GoVersion, info.Platform)
				return err
			case string(output.FormatJSON):
				return output.WriteJSON(streams.Out, info)
			case string(output.FormatYAML):
				return output.WriteYAML(streams.Out, info)
			}
			return usageError{fmt.Errorf("unknown output format %q: use one of text, json, yaml", format)}
		},
	}
	addOutputFlag(cmd, &format, "text", string(output.FormatJSON), string(output.FormatYAML))
	return cmd
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
