package differential

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// markerNamespace is the first namespace the corpus creates; finding it means the reference
// already ran the corpus, and the goldens would record "already exists".
const markerNamespace = "diff-core"

func (tg *target) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, tg.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if tg.token != "" {
		req.Header.Set("Authorization", "Bearer "+tg.token)
	}
	resp, err := tg.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// requireFresh refuses a reference the corpus already ran against.
func (tg *target) requireFresh(ctx context.Context) error {
	code, _, err := tg.do(ctx, http.MethodGet, "/api/v1/namespaces/"+markerNamespace, nil)
	if err != nil {
		return err
	}
	if code != http.StatusNotFound {
		return fmt.Errorf("namespace %s exists on the reference (GET answered %d): record against a fresh one (README.md)", markerNamespace, code)
	}
	return nil
}

// installCRDs creates every CRD in dir on the reference, as apictl loads them with --api-config,
// and waits until each is Established and its group version is discoverable.
func (tg *target) installCRDs(ctx context.Context, dir string) error {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			j, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			var crd struct {
				Metadata struct{ Name string }
				Spec     struct {
					Group    string
					Names    struct{ Plural string }
					Versions []struct{ Name string }
				}
			}
			if err := json.Unmarshal(j, &crd); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			code, body, err := tg.do(ctx, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", j)
			if err != nil {
				return err
			}
			if code != http.StatusCreated {
				return fmt.Errorf("creating CRD %s: %d %s", crd.Metadata.Name, code, body)
			}
			if err := tg.waitEstablished(ctx, crd.Metadata.Name); err != nil {
				return err
			}
			for _, v := range crd.Spec.Versions {
				if err := tg.waitOK(ctx, "/apis/"+crd.Spec.Group+"/"+v.Name+"/"+crd.Spec.Names.Plural); err != nil {
					return err
				}
				if err := tg.waitOK(ctx, "/apis/"+crd.Spec.Group+"/"+v.Name); err != nil {
					return err
				}
			}
		}
	}
	// Let discovery settle everywhere (aggregated and legacy documents are refreshed separately).
	time.Sleep(3 * time.Second)
	return nil
}

func (tg *target) waitEstablished(ctx context.Context, name string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		code, body, err := tg.do(ctx, http.MethodGet, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name, nil)
		if err != nil {
			return err
		}
		var crd struct {
			Status struct {
				Conditions []struct{ Type, Status string }
			}
		}
		if code == http.StatusOK && json.Unmarshal(body, &crd) == nil {
			for _, c := range crd.Status.Conditions {
				if c.Type == "Established" && c.Status == "True" {
					return nil
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("CRD %s was not Established within 60s", name)
}

func (tg *target) waitOK(ctx context.Context, path string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		code, _, err := tg.do(ctx, http.MethodGet, path, nil)
		if err != nil {
			return err
		}
		if code == http.StatusOK {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("GET %s did not answer 200 within 60s", path)
}
