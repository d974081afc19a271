// Package routes is apictl's API model and everything computed from it, the way kube-apiserver's
// installer computes it:
//
//   - the model: groups, versions and resources (API, Group, Version, Resource, Subresource), the
//     built-in API (Builtin), resources declared by CustomResourceDefinition manifests (ParseCRDs,
//     ReadCRDFiles, API.WithCRDs) and --runtime-config (ApplyRuntimeConfig), all joined by LoadAPI;
//   - the route table (Install): every method and path with its action, discovery verb, operation
//     IDs, doc text and media types, plus the non-resource routes;
//   - a Matcher that maps a request's method and path to its route without allocating;
//   - discovery documents (NewDiscovery), legacy and aggregated, and the way back from a live
//     server's discovery to a model (FromDiscovery);
//   - printing the table for people and machines (Write).
//
// OpenAPI documents are built from the table by the openapi sub-package.
//
// The package is pure: only ReadCRDFiles touches the file system, and nothing here touches the
// network.
package routes
