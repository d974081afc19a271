package podtemplates

// Ported from k8s.io/kubernetes v1.37.2, pkg/apis/core/validation/validation.go: ValidatePodTemplate,
// ValidatePodTemplateSpec and, of ValidatePodSpec, what a template's pod is most often wrong in: its
// containers (validateContainers, validateInitContainers, validateContainerCommon's name, image,
// terminationMessagePolicy, ports and pull policy), restartPolicy, dnsPolicy and service account.
// Volumes, env, probes, resources, security contexts, affinity and the other checks of ValidatePodSpec
// are not ported: a template wrong only there is stored as kube would refuse it.

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateTemplateSpec is ValidatePodTemplateSpec.
func validateTemplateSpec(t *corev1.PodTemplateSpec, path *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(t.Labels, path.Child("labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(t.Annotations, path.Child("annotations"))...)
	errs = append(errs, validatePodSpec(&t.Spec, path.Child("spec"))...)
	if len(t.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(path.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return errs
}

func validatePodSpec(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.TerminationGracePeriodSeconds == nil {
		errs = append(errs, field.Required(path.Child("terminationGracePeriodSeconds"), ""))
	}
	names := sets.New[string]()
	errs = append(errs, validateContainers(spec.Containers, names, path.Child("containers"))...)
	errs = append(errs, validateInitContainers(spec.InitContainers, names, path.Child("initContainers"))...)
	errs = append(errs, oneOf(spec.RestartPolicy, path.Child("restartPolicy"),
		corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)...)
	errs = append(errs, oneOf(spec.DNSPolicy, path.Child("dnsPolicy"),
		corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone)...)
	if sa := spec.ServiceAccountName; sa != "" {
		for _, msg := range apivalidation.ValidateServiceAccountName(sa, false) {
			errs = append(errs, field.Invalid(path.Child("serviceAccountName"), sa, msg))
		}
	}
	if spec.DeprecatedServiceAccount != "" && spec.DeprecatedServiceAccount != spec.ServiceAccountName {
		errs = append(errs, field.Invalid(path.Child("deprecatedServiceAccount"), spec.DeprecatedServiceAccount,
			`must be the same as serviceAccountName: "`+spec.ServiceAccountName+`"`))
	}
	return errs
}

// validateContainers is validateContainers: at least one, each valid, names unique (the later
// container of a pair is the duplicate, after its own errors).
func validateContainers(containers []corev1.Container, names sets.Set[string], path *field.Path) field.ErrorList {
	if len(containers) == 0 {
		return field.ErrorList{field.Required(path, "")}
	}
	return validateEach(containers, names, path)
}

// validateInitContainers is validateInitContainers: their names are unique among all containers.
func validateInitContainers(containers []corev1.Container, names sets.Set[string], path *field.Path) field.ErrorList {
	return validateEach(containers, names, path)
}

func validateEach(containers []corev1.Container, names sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range containers {
		c := &containers[i]
		idx := path.Index(i)
		errs = append(errs, validateContainerCommon(c, idx)...)
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(idx.Child("name"), c.Name))
		} else {
			names.Insert(c.Name)
		}
	}
	return errs
}

// validateContainerCommon is the part of validateContainerCommon ported here, in its order.
func validateContainerCommon(c *corev1.Container, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), c.Name, msg))
		}
	}
	if len(c.Image) == 0 {
		errs = append(errs, field.Required(path.Child("image"), ""))
	}
	errs = append(errs, oneOf(c.TerminationMessagePolicy, path.Child("terminationMessagePolicy"),
		corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError)...)
	errs = append(errs, validatePorts(c.Ports, path.Child("ports"))...)
	errs = append(errs, oneOf(c.ImagePullPolicy, path.Child("imagePullPolicy"),
		corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)...)
	return errs
}

// validatePorts is validateContainerPorts.
func validatePorts(ports []corev1.ContainerPort, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, p := range ports {
		idx := path.Index(i)
		if p.Name != "" {
			if msgs := validation.IsValidPortName(p.Name); len(msgs) > 0 {
				for _, msg := range msgs {
					errs = append(errs, field.Invalid(idx.Child("name"), p.Name, msg))
				}
			} else if names.Has(p.Name) {
				errs = append(errs, field.Duplicate(idx.Child("name"), p.Name))
			} else {
				names.Insert(p.Name)
			}
		}
		if p.ContainerPort == 0 {
			errs = append(errs, field.Required(idx.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(p.ContainerPort)) {
				errs = append(errs, field.Invalid(idx.Child("containerPort"), p.ContainerPort, msg))
			}
		}
		if p.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(p.HostPort)) {
				errs = append(errs, field.Invalid(idx.Child("hostPort"), p.HostPort, msg))
			}
		}
		// kube lists the protocols sorted.
		errs = append(errs, oneOf(p.Protocol, idx.Child("protocol"), corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP)...)
	}
	return errs
}

// oneOf requires value and refuses any but supported, listed in the order given, as kube's messages
// list them.
func oneOf[T ~string](value T, path *field.Path, supported ...T) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	for _, s := range supported {
		if value == s {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(path, value, supported)}
}
