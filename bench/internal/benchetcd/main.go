// Command benchetcd runs the single etcd member that the benchmark harness measures against, in a
// process of its own: the harness's load generator (possibly built with -race) and the server under
// test must not share a process, a garbage collector or a race detector with etcd.
//
// It runs pkg/storage/embedded with fsync ON, so that writes cost what they cost in production, and
// writes etcd's client URL to -url-file once etcd serves requests (written whole, so a reader never
// sees a partial URL). It stops on SIGTERM or SIGINT, or when etcd fails.
//
//	benchetcd -dir /tmp/x/etcd -url-file /tmp/x/etcd.url
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/apictl/apictl/pkg/storage/embedded"
)

const (
	startTimeout = 30 * time.Second
	stopTimeout  = 10 * time.Second
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "benchetcd:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("benchetcd", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory for etcd's data (created if missing)")
	urlFile := fs.String("url-file", "", "file to write etcd's client URL to once it is ready")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *urlFile == "" {
		return errors.New("both -dir and -url-file are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	startCtx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	srv, err := embedded.Start(startCtx, embedded.Config{Dir: *dir})
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		_ = srv.Close(closeCtx)
	}()
	if err := writeFileAtomic(*urlFile, strings.Join(srv.ClientURLs(), ",")+"\n"); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return nil
	case err, ok := <-srv.Err():
		if !ok {
			return errors.New("etcd stopped")
		}
		return fmt.Errorf("etcd failed: %w", err)
	}
}

// writeFileAtomic writes content to a temporary file beside path and renames it into place.
func writeFileAtomic(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".url-")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := tmp.WriteString(content)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
