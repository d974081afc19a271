package crschema

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// One Validator serves every request: used from many goroutines at once (run with -race), it gives
// each the answer it gives alone.
func TestConcurrentUse(t *testing.T) {
	v := widgets(t)
	bodies := []string{
		w(allFeatures),
		w(`{"size":"big","color":"Red","bogus":1,"parts":[{"name":"a"},{"name":"a"}]}`),
		w(`{"size":"small","template":{"metadata":{"name":"a/b","x":1}}}`),
	}
	run := func(body string) string {
		obj, warnings, err := v.DecodeBody([]byte(body), "Warn")
		if err != nil {
			return err.Error()
		}
		obj.SetResourceVersion("1")
		old := obj.DeepCopy()
		old.Object["spec"].(map[string]any)["color"] = "Old"
		ctx := context.Background()
		stored, err := v.DecodeStored([]byte(jsonOf(t, obj)))
		if err != nil {
			return err.Error()
		}
		return fmt.Sprint(warnings, v.Validate(ctx, obj), v.ValidateUpdate(ctx, obj, old), v.ValidateStatusUpdate(ctx, obj, old), jsonOf(t, stored))
	}
	want := make([]string, len(bodies))
	for i, b := range bodies {
		want[i] = run(b)
	}
	const goroutines = 16
	var wg sync.WaitGroup
	errs := make(chan string, goroutines*len(bodies))
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range bodies {
				i := (g + j) % len(bodies)
				if got := run(bodies[i]); got != want[i] {
					errs <- fmt.Sprintf("body %d: got %s\nwant %s", i, got, want[i])
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
