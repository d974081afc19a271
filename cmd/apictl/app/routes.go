package app

import (
	"github.com/spf13/cobra"
)

func newRoutesCmd(_ Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "routes",
		Short: "Print the route table the server installs",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			return notAvailable("apictl routes")
		},
	}
}
