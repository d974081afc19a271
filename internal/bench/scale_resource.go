package bench

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
)

// The kinds of object the scale measurement can seed (Config.ScaleKind).
const (
	// ScaleCustom is custom objects of one CRD, issue 22's objects and its default: the kind a
	// million of which a cluster is likely to hold (operators' records), and the kind whose cache the
	// server, as kube's, does not wait for before it reports ready.
	ScaleCustom = "custom"
	// ScaleConfigMaps is ConfigMaps: a built-in resource, whose cache the server fills before it
	// reports ready (at most --storage-initialization-timeout).
	ScaleConfigMaps = "configmaps"
)

// ScaleKinds lists the kinds, the default first.
func ScaleKinds() []string { return []string{ScaleCustom, ScaleConfigMaps} }

// scaleResource is what the scale measurement needs to know of the seeded kind: its paths, its
// objects, and how to make it served.
type scaleResource struct {
	// title names the seeded objects in the report.
	title string
	// all is the path of the LIST across namespaces.
	all string
	// collection is the path of a namespace's objects.
	collection func(namespace string) string
	// object is an object's JSON; i varies its content.
	object func(namespace, name string, i int) []byte
	// prefix starts the name of every seeded object, so that counting `"name":"<prefix>` in a list
	// counts them.
	prefix string
	// install makes the kind served on a new server; nil when it is built in.
	install func(ctx context.Context, h httpTarget) error
}

// scaleResourceOf is the kind named by Config.ScaleKind; Config.Validate refuses other names.
func scaleResourceOf(kind string) scaleResource {
	if kind == ScaleConfigMaps {
		return scaleResource{title: "ConfigMaps", all: "/api/v1/configmaps", collection: configMapsPath, object: scaleConfigMap, prefix: "cm-"}
	}
	return scaleResource{
		title:      "custom objects of " + scaleCRDName,
		all:        "/apis/" + scaleGroup + "/v1/" + scalePlural,
		collection: func(ns string) string { return "/apis/" + scaleGroup + "/v1/namespaces/" + ns + "/" + scalePlural },
		object:     scaleCustomObject,
		prefix:     "so-",
		install:    installScaleCRD,
	}
}

// name is seeded object i's name.
func (r scaleResource) name(i int) string { return fmt.Sprintf("%s%07d", r.prefix, i) }

// seeded is seeded object i.
func (r scaleResource) seeded(i int) []byte { return r.object(scaleNamespace(i), r.name(i), i) }

// needle is what starts a seeded object's name in a list, once per object.
func (r scaleResource) needle() []byte { return []byte(`"name":"` + r.prefix) }

// scaleConfigMap is a seeded ConfigMap: with the server's metadata and the managed fields of the
// "bench" field manager, about 480 bytes of compact JSON as listed.
func scaleConfigMap(namespace, name string, i int) []byte {
	b := appendObjectHead(make([]byte, 0, 192), `"v1","kind":"ConfigMap"`, namespace, name, "", "bench-scale")
	b = append(b, `,"data":{"index":"`...)
	b = append(b, fmt.Sprintf("%07d", i)...)
	return append(b, `","region":"eu-west-1"}}`...)
}

// The seeded CRD.
const (
	scaleGroup   = "scale.example.com"
	scalePlural  = "records"
	scaleCRDName = scalePlural + "." + scaleGroup
)

// scaleCustomObject is a seeded custom object: about 525 bytes as listed, with the metadata and
// managed fields the server adds (generation, a longer apiVersion twice).
func scaleCustomObject(namespace, name string, i int) []byte {
	return record(namespace, name, "", i)
}

// record is a custom object of the seeded CRD; rv, when not empty, is sent as
// metadata.resourceVersion (an update's precondition).
func record(namespace, name, rv string, i int) []byte {
	b := appendObjectHead(make([]byte, 0, 256), `"`+scaleGroup+`/v1","kind":"Record"`, namespace, name, rv, "bench-scale")
	b = append(b, `,"spec":{"index":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	return append(b, `}}`...)
}

// scaleCRD defines the seeded custom objects: a structural schema, as every v1 CRD has.
const scaleCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"` + scaleCRDName + `"},
"spec":{"group":"` + scaleGroup + `","scope":"Namespaced",
 "names":{"plural":"` + scalePlural + `","singular":"record","kind":"Record","listKind":"RecordList"},
 "versions":[{"name":"v1","served":true,"storage":true,
  "schema":{"openAPIV3Schema":{"type":"object","properties":{
   "spec":{"type":"object","properties":{"index":{"type":"integer"}}}}}}}]}}`

// installScaleCRD creates the CRD and waits until its objects are served.
func installScaleCRD(ctx context.Context, h httpTarget) error {
	if err := h.do(ctx, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", []byte(scaleCRD), http.StatusCreated, nil); err != nil {
		return fmt.Errorf("creating the CRD %s: %w", scaleCRDName, err)
	}
	return waitEstablished(ctx, h, 1)
}
