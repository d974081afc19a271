package routes

// Groups of the extension points: admission configuration and API registration. Their kinds are
// described in pkg/kinds (admissionregistration, apiregistration/apiservices).
const (
	GroupAdmissionRegistration = "admissionregistration.k8s.io"
	GroupAPIRegistration       = "apiregistration.k8s.io"
)
