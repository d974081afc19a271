package certs

import (
	"context"
	"os"
	"testing"
)

// BenchmarkInit measures `apictl certs init` in an empty directory: three keys (CA, serving, admin),
// two signatures and seven atomic writes, per key algorithm.
func BenchmarkInit(b *testing.B) {
	for _, alg := range KeyAlgorithms() {
		b.Run(string(alg), func(b *testing.B) {
			root := b.TempDir()
			b.ReportAllocs()
			for b.Loop() {
				dir, err := os.MkdirTemp(root, "pki-")
				if err != nil {
					b.Fatal(err)
				}
				spec := NewServingSpec(dir)
				spec.KeyAlgorithm = alg
				if _, err := EnsureServing(context.Background(), spec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEnsureServingKept measures what `apictl serve` pays at every start once the PKI exists:
// reading and checking every file, writing none.
func BenchmarkEnsureServingKept(b *testing.B) {
	dir := b.TempDir()
	spec := NewServingSpec(dir)
	if _, err := EnsureServing(context.Background(), spec); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r, err := EnsureServing(context.Background(), spec)
		if err != nil || r.Changed() {
			b.Fatalf("%v, changed %v", err, r != nil && r.Changed())
		}
	}
}
