// Command apictl serves a Kubernetes-style API on etcd, and prints its routes, bootstraps its
// certificates and checks its flags.
package main

import (
	"context"
	"os"

	"github.com/apictl/apictl/cmd/apictl/app"
)

func main() {
	os.Exit(app.Main(context.Background(), os.Args[1:], app.StandardStreams()))
}
