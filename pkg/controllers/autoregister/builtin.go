package autoregister

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// Priority orders a group among groups (Group, higher first) and a version within its group
// (Version, higher first) in discovery.
type Priority struct {
	Group   int32
	Version int32
}

// BuiltinPriorities are kube-apiserver's priorities of its built-in group versions
// (k8s.io/kubernetes cmd/kube-apiserver/app/aggregator.go merged over
// pkg/controlplane/apiserver.DefaultGenericAPIServicePriorities, v1.37.2). A built-in group version
// missing here gets no APIService, as in kube.
var BuiltinPriorities = map[schema.GroupVersion]Priority{
	{Group: "", Version: "v1"}:                                   {Group: 18000, Version: 1},
	{Group: "events.k8s.io", Version: "v1"}:                      {Group: 17750, Version: 15},
	{Group: "events.k8s.io", Version: "v1beta1"}:                 {Group: 17750, Version: 5},
	{Group: "authentication.k8s.io", Version: "v1"}:              {Group: 17700, Version: 15},
	{Group: "authentication.k8s.io", Version: "v1beta1"}:         {Group: 17700, Version: 9},
	{Group: "authentication.k8s.io", Version: "v1alpha1"}:        {Group: 17700, Version: 1},
	{Group: "authorization.k8s.io", Version: "v1"}:               {Group: 17600, Version: 15},
	{Group: "certificates.k8s.io", Version: "v1"}:                {Group: 17300, Version: 15},
	{Group: "certificates.k8s.io", Version: "v1beta1"}:           {Group: 17300, Version: 9},
	{Group: "certificates.k8s.io", Version: "v1alpha1"}:          {Group: 17300, Version: 1},
	{Group: "rbac.authorization.k8s.io", Version: "v1"}:          {Group: 17000, Version: 15},
	{Group: "apiextensions.k8s.io", Version: "v1"}:               {Group: 16700, Version: 15},
	{Group: "admissionregistration.k8s.io", Version: "v1"}:       {Group: 16700, Version: 15},
	{Group: "admissionregistration.k8s.io", Version: "v1beta1"}:  {Group: 16700, Version: 12},
	{Group: "admissionregistration.k8s.io", Version: "v1alpha1"}: {Group: 16700, Version: 9},
	{Group: "coordination.k8s.io", Version: "v1"}:                {Group: 16500, Version: 15},
	{Group: "coordination.k8s.io", Version: "v1beta1"}:           {Group: 16500, Version: 13},
	{Group: "coordination.k8s.io", Version: "v1alpha2"}:          {Group: 16500, Version: 12},
	{Group: "discovery.k8s.io", Version: "v1"}:                   {Group: 16200, Version: 15},
	{Group: "discovery.k8s.io", Version: "v1beta1"}:              {Group: 16200, Version: 12},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}:       {Group: 16100, Version: 21},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3"}:  {Group: 16100, Version: 18},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta2"}:  {Group: 16100, Version: 15},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta1"}:  {Group: 16100, Version: 12},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1alpha1"}: {Group: 16100, Version: 9},
	{Group: "internal.apiserver.k8s.io", Version: "v1alpha1"}:    {Group: 16000, Version: 9},
	{Group: "storagemigration.k8s.io", Version: "v1"}:            {Group: 15800, Version: 15},
	{Group: "storagemigration.k8s.io", Version: "v1beta1"}:       {Group: 15800, Version: 9},
	{Group: "apps", Version: "v1"}:                               {Group: 17800, Version: 15},
	{Group: "autoscaling", Version: "v1"}:                        {Group: 17500, Version: 15},
	{Group: "autoscaling", Version: "v2"}:                        {Group: 17500, Version: 30},
	{Group: "autoscaling", Version: "v2beta1"}:                   {Group: 17500, Version: 9},
	{Group: "autoscaling", Version: "v2beta2"}:                   {Group: 17500, Version: 1},
	{Group: "batch", Version: "v1"}:                              {Group: 17400, Version: 15},
	{Group: "batch", Version: "v1beta1"}:                         {Group: 17400, Version: 9},
	{Group: "batch", Version: "v2alpha1"}:                        {Group: 17400, Version: 9},
	{Group: "networking.k8s.io", Version: "v1"}:                  {Group: 17200, Version: 15},
	{Group: "networking.k8s.io", Version: "v1beta1"}:             {Group: 17200, Version: 9},
	{Group: "policy", Version: "v1"}:                             {Group: 17100, Version: 15},
	{Group: "policy", Version: "v1beta1"}:                        {Group: 17100, Version: 9},
	{Group: "storage.k8s.io", Version: "v1"}:                     {Group: 16800, Version: 15},
	{Group: "storage.k8s.io", Version: "v1beta1"}:                {Group: 16800, Version: 9},
	{Group: "storage.k8s.io", Version: "v1alpha1"}:               {Group: 16800, Version: 1},
	{Group: "scheduling.k8s.io", Version: "v1"}:                  {Group: 16600, Version: 15},
	{Group: "scheduling.k8s.io", Version: "v1beta1"}:             {Group: 16600, Version: 9},
	{Group: "scheduling.k8s.io", Version: "v1alpha3"}:            {Group: 16600, Version: 3},
	{Group: "node.k8s.io", Version: "v1"}:                        {Group: 16300, Version: 15},
	{Group: "node.k8s.io", Version: "v1alpha1"}:                  {Group: 16300, Version: 1},
	{Group: "node.k8s.io", Version: "v1beta1"}:                   {Group: 16300, Version: 9},
	{Group: "resource.k8s.io", Version: "v1"}:                    {Group: 16200, Version: 21},
	{Group: "resource.k8s.io", Version: "v1beta2"}:               {Group: 16200, Version: 15},
	{Group: "resource.k8s.io", Version: "v1beta1"}:               {Group: 16200, Version: 9},
	{Group: "resource.k8s.io", Version: "v1alpha3"}:              {Group: 16200, Version: 1},
	{Group: "lifecycle.k8s.io", Version: "v1alpha1"}:             {Group: 15700, Version: 1},
}

// Name is an APIService's name for a group version: "<version>.<group>", "v1." for the core group.
func Name(gv schema.GroupVersion) string { return gv.Version + "." + gv.Group }

// Local returns the Local APIService of gv with the given priorities.
func Local(gv schema.GroupVersion, p Priority) *apiregistrationv1.APIService {
	return &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: Name(gv)},
		Spec: apiregistrationv1.APIServiceSpec{Group: gv.Group, Version: gv.Version,
			GroupPriorityMinimum: p.Group, VersionPriority: p.Version},
	}
}

// Builtin returns the Local APIServices of the served built-in group versions that kube gives one:
// those in BuiltinPriorities (the aggregator's own apiregistration.k8s.io has none).
func Builtin(served []schema.GroupVersion) []*apiregistrationv1.APIService {
	var out []*apiregistrationv1.APIService
	for _, gv := range served {
		if p, ok := BuiltinPriorities[gv]; ok {
			out = append(out, Local(gv, p))
		}
	}
	return out
}
