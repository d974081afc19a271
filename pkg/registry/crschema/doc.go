// Package crschema applies a CustomResourceDefinition's openAPIV3Schema to custom resources the way
// kube-apiserver does: it prunes unknown fields and reports their paths for fieldValidation, applies
// schema defaults when objects are decoded from requests and from storage, validates objects (types,
// required fields, enums, formats, bounds, patterns, list types, embedded resources, metadata, apiVersion
// and kind, x-kubernetes-validations CEL rules) with kube's field paths and messages, and converts between a custom resource and its
// autoscaling/v1 Scale.
//
// A Validator is compiled once per served version at start-up (NewSet, from the CRDs, because the
// scale subresource's paths are not part of routes.Resource) and is safe for concurrent use. A REST
// handler calls it at fixed points of a request:
//
//	create, update:  obj, warnings, err := v.DecodeBody(jsonBody, fieldValidation) // 400s; warnings to headers
//	                 registry's PrepareForCreate / PrepareForUpdate, name generation
//	                 err = v.Invalid(name, v.Validate(ctx, obj))                    // or ValidateUpdate(ctx, obj, old)
//	json/merge patch: obj, warnings, err := v.DecodePatched(patched, patchStrictErrs, fieldValidation)
//	status writes:   err = v.Invalid(name, v.ValidateStatusUpdate(ctx, obj, old))
//	every read:      obj, err := v.DecodeStored(storedJSON) // prunes and defaults, as kube does on read
//	scale:           GET v.ScaleFromObject(obj); PUT/PATCH start from v.ScaleForUpdate(obj),
//	                 then obj, err = v.ApplyScale(obj, scale) and ValidateUpdate as for any update
//
// # Libraries
//
// Structural schemas, pruning and list-type validation come from k8s.io/apiextensions-apiserver
// (pkg/apiserver/schema, schema/pruning, schema/listtype); value validation is
// k8s.io/kube-openapi/pkg/validation/validate, the validator kube itself runs for custom resources;
// metadata rules are k8s.io/apimachinery's. x-kubernetes-validations (CEL) rules are kube's own
// implementation, apiextensions-apiserver's schema/cel: each served version's rules are compiled once
// by Compile (kube's per-call cost limit) and run by Validate, ValidateUpdate and ValidateStatusUpdate
// after every other check, as kube's custom resource strategy runs them (the runtime cost budget per
// object, transition rules only on updates, kube's ratcheting of unchanged values, blocked by schema
// errors that make the object unfit). When CRDs are loaded, NewSet refuses rules kube refuses (they do
// not compile, or cost too much by kube's estimate) with the errors of kube's CRD validation
// (ValidateRules).
//
// Other glue packages of apiextensions-apiserver (pkg/apiserver/validation, schema/defaulting,
// schema/objectmeta) are not used: this package carries small equivalents of them, written from kube's
// behaviour: the schema conversion for the validator (int-or-string typing, the formats kube supports),
// the mapping of validation results to field errors, defaulting and the dropping of nulls, ObjectMeta
// coercion, validation of embedded resources, and validation ratcheting on update (GA and always on
// since Kubernetes 1.33). The tests pin kube's messages.
//
// Conversion between versions is kube's None strategy (only apiVersion changes).
package crschema
