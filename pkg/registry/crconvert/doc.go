// Package crconvert converts custom resources between the versions of their CustomResourceDefinition,
// as kube-apiserver does: objects are stored at the CRD's storage version and converted to the version
// a client asks for when they are read or watched.
//
// The conversion itself is kube's own (k8s.io/apiextensions-apiserver/pkg/apiserver/conversion):
// strategy None only changes apiVersion; strategy Webhook posts a ConversionReview (v1 or v1beta1, as the
// CRD lists them) over HTTPS to clientConfig.url, trusting clientConfig.caBundle, checks that the webhook
// changed no metadata but labels and annotations, and words its errors as kube does
// (`conversion webhook for example.com/v1, Kind=Widget failed: ...`), which is what clients see. Around
// it this package does what kube's storage codec does: an object read from storage is pruned, repaired
// and defaulted at its own version before it is converted, and every converted object is pruned to the
// schema of the version it was converted to.
//
// apictl has no Services or endpoints, so a webhook given as clientConfig.service cannot be reached:
// its conversions fail with a message that says so and asks for clientConfig.url.
//
// kube's package keeps two things process-wide, neither of which this package changes: its Prometheus
// metrics, registered once in component-base's legacy registry, and the default feature gates, which it
// only reads. Webhook calls are bounded by kube's 30 s webhook client timeout; kube's converter takes no
// context, so a call in flight is not cancelled when the request that needed it ends.
package crconvert
