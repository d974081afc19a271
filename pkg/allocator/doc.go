// Package allocator hands out the cluster IPs and node ports of Services, as kube-apiserver's service
// REST does, atomically across every apictl replica on one etcd. A cluster IP is taken by creating
// the networking.k8s.io/v1 IPAddress named by it (kube's labels, parentRef to the service), from the
// ranges of the ready ServiceCIDRs, as kube 1.33+ allocates; a node port is a reservation key of its
// own. Both are created with the Store's Create (so two replicas cannot both win one) and deleted
// when their service lets them go. A reservation whose service no longer holds it (a replica that
// died between reserving and storing the service) is reclaimed after a grace period by whoever needs
// it; an IPAddress the allocator did not make is never reclaimed and keeps its address from every
// Service. Migrate moves the per-IP keys of apictl before IPAddresses to them.
//
// The allocator sits in front of the services' Store (Wrap): a service is given its IP families,
// cluster IPs and node ports as it is created or updated, and releases them when it is deleted.
package allocator
