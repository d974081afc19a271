// Package allocator hands out the cluster IPs and node ports of Services, as kube-apiserver's service
// REST does, atomically across every apictl replica on one etcd: each allocated IP and port is a
// reservation key of its own, created with the Store's Create (so two replicas cannot both win it) and
// deleted when its service lets it go. A reservation names its service; one whose service no longer
// holds it (a replica that died between reserving and storing the service) is reclaimed after a grace
// period by whoever needs it.
//
// The allocator sits in front of the services' Store (Wrap): a service is given its IP families,
// cluster IPs and node ports as it is created or updated, and releases them when it is deleted.
package allocator
