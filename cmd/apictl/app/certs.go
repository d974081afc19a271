package app

import (
	"github.com/spf13/cobra"
)

func newCertsCmd(_ Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "certs",
		Short: "Bootstrap, inspect and renew the server's PKI",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			return notAvailable("apictl certs")
		},
	}
}
