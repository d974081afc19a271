// Package tables turns a resource's objects into the meta.k8s.io/v1 Table that kubectl get asks for
// with Accept: application/json;as=Table;v=v1;g=meta.k8s.io, with the columns and cells kube-apiserver
// prints:
//
//   - built-in kinds get the columns and cells of kube's printers (configmaps NAME DATA AGE, secrets
//     NAME TYPE DATA AGE, events LAST SEEN TYPE REASON OBJECT MESSAGE and the wide ones, ...); roles
//     and cluster roles, which kube leaves to its default convertor, print NAME and CREATED AT;
//   - custom resources get their CRD's additionalPrinterColumns, evaluated with client-go's JSONPath
//     and formatted by column type as kube's CRD convertor does (a date becomes an age); a CRD
//     without columns prints NAME and AGE;
//   - any other resource prints kube's default NAME and CREATED AT.
//
// Each row carries the object as the request's includeObject asks: its metadata as a
// PartialObjectMetadata (the default), the whole object, or nothing.
//
// The package is pure: no I/O, and the time that ages are measured from comes from a clock the
// caller may replace (WithClock).
//
// # How a handler uses it
//
// Build one Converter per resource when the server starts (New, or ForAPI for every resource of an
// API); converters are immutable and safe for concurrent use. Per request:
//
//	opts, err := tables.ParseOptions(r.URL.Query()) // includeObject; 400 when invalid
//	opts.Version = "v1"                             // or "v1beta1", from the negotiated Accept
//
//	// GET of one object: the table's resourceVersion is the object's, as in kube.
//	table, err := conv.Convert(obj, opts)
//
//	// LIST: add objects as they are decoded from storage, then pass the list's metadata.
//	b, err := conv.NewBuilder(opts)
//	for each stored value { obj := strategy.New(); decode into obj; err = b.Add(obj) }
//	table := b.Finish(metav1.ListMeta{ResourceVersion: rv, Continue: next, RemainingItemCount: n})
//
//	// WATCH: one Watch per stream; every event's object becomes a one-row table, and only the
//	// first carries column definitions. Status objects of ERROR events are sent as they are.
//	w, err := conv.Watch(opts)
//	table, err := w.Convert(event.Object)
//
// The table is then written as JSON with Content-Type application/json. Errors about the request are
// apimachinery StatusErrors (400 for a bad includeObject, 406 for an unknown Table version); any other
// error means an object of the wrong type reached the converter.
package tables
