// Package differential replays a corpus of API requests against apictl and compares each answer
// with the one kube-apiserver v1.37.2 gave to the same request (see README.md). The package holds
// only tests.
package differential
