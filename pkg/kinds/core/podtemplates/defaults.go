package podtemplates

// Ported from k8s.io/kubernetes v1.37.2: pkg/apis/core/v1/zz_generated.defaults.go
// (SetObjectDefaults_PodTemplate, the order below) and pkg/apis/core/v1/defaults.go (the SetDefaults_
// functions it calls). SetDefaults_Pod is not among them: kube does not default a PodTemplate's pod
// as it defaults a Pod (no enableServiceLinks, no requests from limits, no probe protocol).

import (
	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
)

func setDefaults(pt *corev1.PodTemplate) {
	spec := &pt.Template.Spec
	setPodSpecDefaults(spec)
	for i := range spec.Volumes {
		setVolumeDefaults(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		setContainerDefaults(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		setContainerDefaults(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		c := corev1.Container(spec.EphemeralContainers[i].EphemeralContainerCommon)
		setContainerDefaults(&c)
		spec.EphemeralContainers[i].EphemeralContainerCommon = corev1.EphemeralContainerCommon(c)
	}
	roundUp(spec.Overhead)
	if spec.Resources != nil {
		roundUp(spec.Resources.Limits)
		roundUp(spec.Resources.Requests)
	}
}

// setPodSpecDefaults is SetDefaults_PodSpec.
func setPodSpecDefaults(spec *corev1.PodSpec) {
	// serviceAccount is the deprecated spelling; serviceAccountName wins and the two are kept equal.
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount
	}
	spec.DeprecatedServiceAccount = spec.ServiceAccountName
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
		spec.TerminationGracePeriodSeconds = &grace
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
}

// defaultMode is the file mode kube gives secret, config map, downward API and projected volumes
// (0644).
const defaultMode = int32(0o644)

func setMode(mode **int32) {
	if *mode == nil {
		m := defaultMode
		*mode = &m
	}
}

// setVolumeDefaults is SetDefaults_Volume and the defaults of each volume source, in kube's order.
func setVolumeDefaults(v *corev1.Volume) {
	if (v.VolumeSource == corev1.VolumeSource{}) {
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	if v.Image != nil && v.Image.PullPolicy == "" {
		v.Image.PullPolicy = pullPolicy(v.Image.Reference)
	}
	if v.HostPath != nil && v.HostPath.Type == nil {
		unset := corev1.HostPathUnset
		v.HostPath.Type = &unset
	}
	if v.Secret != nil {
		setMode(&v.Secret.DefaultMode)
	}
	if v.ISCSI != nil && v.ISCSI.ISCSIInterface == "" {
		v.ISCSI.ISCSIInterface = "default"
	}
	if v.RBD != nil {
		setRBDDefaults(v.RBD)
	}
	if v.DownwardAPI != nil {
		setMode(&v.DownwardAPI.DefaultMode)
		setDownwardAPIDefaults(v.DownwardAPI.Items)
	}
	if v.ConfigMap != nil {
		setMode(&v.ConfigMap.DefaultMode)
	}
	if v.AzureDisk != nil {
		setAzureDiskDefaults(v.AzureDisk)
	}
	if v.Projected != nil {
		setProjectedDefaults(v.Projected)
	}
	if v.ScaleIO != nil {
		if v.ScaleIO.StorageMode == "" {
			v.ScaleIO.StorageMode = "ThinProvisioned"
		}
		if v.ScaleIO.FSType == "" {
			v.ScaleIO.FSType = "xfs"
		}
	}
	if v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil {
		spec := &v.Ephemeral.VolumeClaimTemplate.Spec
		if spec.VolumeMode == nil {
			mode := corev1.PersistentVolumeFilesystem
			spec.VolumeMode = &mode
		}
		roundUp(spec.Resources.Limits)
		roundUp(spec.Resources.Requests)
	}
}

func setRBDDefaults(rbd *corev1.RBDVolumeSource) {
	if rbd.RBDPool == "" {
		rbd.RBDPool = "rbd"
	}
	if rbd.RadosUser == "" {
		rbd.RadosUser = "admin"
	}
	if rbd.Keyring == "" {
		rbd.Keyring = "/etc/ceph/keyring"
	}
}

func setAzureDiskDefaults(d *corev1.AzureDiskVolumeSource) {
	if d.CachingMode == nil {
		mode := corev1.AzureDataDiskCachingReadWrite
		d.CachingMode = &mode
	}
	if d.FSType == nil {
		fs := "ext4"
		d.FSType = &fs
	}
	if d.ReadOnly == nil {
		readOnly := false
		d.ReadOnly = &readOnly
	}
	if d.Kind == nil {
		kind := corev1.AzureSharedBlobDisk
		d.Kind = &kind
	}
}

func setProjectedDefaults(p *corev1.ProjectedVolumeSource) {
	setMode(&p.DefaultMode)
	for i := range p.Sources {
		s := &p.Sources[i]
		if s.DownwardAPI != nil {
			setDownwardAPIDefaults(s.DownwardAPI.Items)
		}
		if s.ServiceAccountToken != nil && s.ServiceAccountToken.ExpirationSeconds == nil {
			hour := int64(3600)
			s.ServiceAccountToken.ExpirationSeconds = &hour
		}
	}
}

func setDownwardAPIDefaults(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		setFieldRefDefaults(items[i].FieldRef)
	}
}

// setFieldRefDefaults is SetDefaults_ObjectFieldSelector.
func setFieldRefDefaults(ref *corev1.ObjectFieldSelector) {
	if ref != nil && ref.APIVersion == "" {
		ref.APIVersion = "v1"
	}
}

// setContainerDefaults is SetDefaults_Container and what SetObjectDefaults_PodTemplate does for each
// container's ports, env, resources, probes and lifecycle.
func setContainerDefaults(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		from := c.Env[i].ValueFrom
		if from == nil {
			continue
		}
		setFieldRefDefaults(from.FieldRef)
		if from.FileKeyRef != nil && from.FileKeyRef.Optional == nil {
			optional := false
			from.FileKeyRef.Optional = &optional
		}
	}
	roundUp(c.Resources.Limits)
	roundUp(c.Resources.Requests)
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		setProbeDefaults(p)
	}
	if c.Lifecycle != nil {
		if c.Lifecycle.PostStart != nil {
			setHTTPGetDefaults(c.Lifecycle.PostStart.HTTPGet)
		}
		if c.Lifecycle.PreStop != nil {
			setHTTPGetDefaults(c.Lifecycle.PreStop.HTTPGet)
		}
	}
}

// pullPolicy is Always for an image whose tag is latest (an image with neither tag nor digest counts
// as latest) and IfNotPresent for any other, an image that does not parse included, as kube's
// parsers.ParseImageName decides.
func pullPolicy(image string) corev1.PullPolicy {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return corev1.PullIfNotPresent
	}
	tagged, hasTag := named.(reference.Tagged)
	_, hasDigest := named.(reference.Digested)
	if hasTag && tagged.Tag() == "latest" || !hasTag && !hasDigest {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// setProbeDefaults is SetDefaults_Probe with the defaults of its handler.
func setProbeDefaults(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	setHTTPGetDefaults(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		service := ""
		p.GRPC.Service = &service
	}
}

// setHTTPGetDefaults is SetDefaults_HTTPGetAction.
func setHTTPGetDefaults(a *corev1.HTTPGetAction) {
	if a == nil {
		return
	}
	if a.Path == "" {
		a.Path = "/"
	}
	if a.Scheme == "" {
		a.Scheme = corev1.URISchemeHTTP
	}
}

// roundUp is SetDefaults_ResourceList: every quantity rounded up to milli precision.
func roundUp(list corev1.ResourceList) {
	for name, q := range list {
		q.RoundUp(-3)
		list[name] = q
	}
}
