package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/output"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/routes/openapi"
	"github.com/apictl/apictl/pkg/version"
)

// routesOptions are the settings of `apictl routes`.
type routesOptions struct {
	filter     routes.Filter
	format     string
	enablement *flags.APIEnablementOptions
	profiling  bool
	live       liveOptions
}

// newRoutesCmd builds `apictl routes`.
func newRoutesCmd(streams Streams) *cobra.Command { return newRoutesCmdWithRun(streams, nil) }

// newRoutesCmdWithRun builds `apictl routes`; runF replaces the run function in tests that only
// need the parsed options.
func newRoutesCmdWithRun(streams Streams, runF func(context.Context, *routesOptions) error) *cobra.Command {
	o := &routesOptions{enablement: flags.NewAPIEnablementOptions(), profiling: flags.NewFeatureOptions().Profiling}
	cmd := &cobra.Command{
		Use:   "routes [--group G] [--version V] [--resource R] [--verb V] [--api-config PATH] [--runtime-config K=V] [--non-resource] [-o FORMAT]",
		Short: "Print the route table the server installs",
		Long: "Print every route apictl serve installs, computed as kube-apiserver's installer computes it: method, path,\n" +
			"discovery verb and OpenAPI operation ID, one section per group version with a summary line and a total.\n" +
			"-o wide adds the action, scope, kind, long-running flag and description; -o openapi-v2 and -o openapi-v3\n" +
			"print the OpenAPI documents the server publishes. --api-config and --runtime-config take the same values\n" +
			"as apictl serve. With --server (or --kubeconfig) the table is computed from a running server's discovery\n" +
			"instead: any Kubernetes API server, not only apictl.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runRoutes(cmd.Context(), o, streams)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.filter.Group, "group", "", `Only routes of this API group ("core" for the core group)`)
	fs.StringVar(&o.filter.Version, "version", "", "Only routes of this version, such as v1")
	fs.StringVar(&o.filter.Resource, "resource", "", "Only routes of this resource (configmaps) or subresource (namespaces/status)")
	fs.StringVar(&o.filter.Verb, "verb", "", "Only routes with this discovery verb (get, list, watch, create, update, patch, delete, deletecollection)")
	fs.BoolVar(&o.filter.NonResource, "non-resource", false, "Also print the non-resource routes: /, discovery, health, /version, /metrics, OpenAPI and profiling")
	fs.BoolVar(&o.profiling, "profiling", o.profiling, "Include /debug/pprof, as apictl serve --profiling does")
	o.enablement.AddFlags(fs)
	o.live.addFlags(cmd)
	addOutputFlag(cmd, &o.format, formatNames(routes.Formats())...)
	registerRoutesCompletions(cmd)
	return cmd
}

// registerRoutesCompletions completes filter values from the built-in API and paths for files.
func registerRoutesCompletions(cmd *cobra.Command) {
	api := routes.Builtin()
	groups := []string{"core"}
	var resources []string
	for _, g := range api.Groups() {
		if g.Name != routes.GroupCore {
			groups = append(groups, g.Name)
		}
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				resources = append(resources, r.Plural)
				for _, s := range r.Subresources {
					resources = append(resources, r.Plural+"/"+s.Name)
				}
			}
		}
	}
	fixed := map[string][]string{"group": groups, "resource": resources, "verb": routes.StandardVerbs(), "version": {"v1"}}
	for name, values := range fixed {
		_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
	_ = cmd.MarkFlagFilename("api-config", "yaml", "yml", "json")
	_ = cmd.MarkFlagFilename("kubeconfig")
	_ = cmd.MarkFlagFilename("certificate-authority", "crt", "pem")
}

// runRoutes computes the table (from the model, or from a live server's discovery) and prints it.
func runRoutes(ctx context.Context, o *routesOptions, streams Streams) error {
	format, err := parseFormat(o.format, routes.Formats())
	if err != nil {
		return err
	}
	if err := o.enablement.Complete(); err != nil {
		return err
	}
	var api *routes.API
	if o.live.enabled() {
		if len(o.enablement.APIConfig) > 0 {
			return usageError{errors.New("--api-config cannot be used with --server or --kubeconfig: the server's discovery already lists its resources")}
		}
		api, err = liveAPI(ctx, o.live, streams)
		if err == nil {
			api, err = routes.ApplyRuntimeConfig(api, o.enablement.RuntimeConfig)
		}
	} else {
		api, err = routes.LoadAPI(o.enablement.APIConfig, o.enablement.RuntimeConfig)
	}
	if err != nil {
		return reportProblems(streams, err)
	}
	if err := o.filter.Check(api); err != nil {
		return usageError{err}
	}
	table := routes.Install(api, routes.InstallOptions{Profiling: o.profiling}).Filter(o.filter)
	opts := openapi.Options{Version: version.Get().GitVersion}
	switch format {
	case routes.FormatOpenAPIV2:
		doc, err := openapi.BuildV2(table, api, opts)
		if err != nil {
			return fmt.Errorf("building the OpenAPI v2 document: %w", err)
		}
		return output.WriteJSON(streams.Out, doc)
	case routes.FormatOpenAPIV3:
		docs, err := openapi.BuildV3(table, api, opts)
		if err != nil {
			return fmt.Errorf("building the OpenAPI v3 documents: %w", err)
		}
		return output.WriteJSON(streams.Out, docs)
	}
	return routes.Write(streams.Out, table, format, streams.OutIsTerminal)
}

// reportProblems prints each problem of a joined error on its own line and fails: a bad manifest
// or runtime-config entry is reported like apictl flags validate reports problems.
func reportProblems(streams Streams, err error) error {
	problems := routes.Errors(err)
	for _, p := range problems {
		fmt.Fprintf(streams.ErrOut, "error: %v\n", p)
	}
	if len(problems) > 1 {
		fmt.Fprintf(streams.ErrOut, "%d error(s)\n", len(problems))
	}
	return exitError{ExitFailure}
}
