package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Representations of an unpaged LIST the scale measurement can ask for (issue 38): compact JSON, as
// client-go asks; indented JSON, as curl gets; YAML; a Table, as kubectl get asks; and
// PartialObjectMetadataList, as controller-runtime's metadata informers ask.
const (
	ReprJSON     = "json"
	ReprPretty   = "pretty"
	ReprYAML     = "yaml"
	ReprTable    = "table"
	ReprMetadata = "metadata"
)

// ScaleRepresentations are the representations a scale measurement can run, in its report's order.
func ScaleRepresentations() []string {
	return []string{ReprJSON, ReprPretty, ReprYAML, ReprTable, ReprMetadata}
}

// representation is how a LIST in one representation is asked for, and how a seeded object's name
// shows in it, once per object.
type representation struct {
	name, query, accept string
	needle              func(prefix string) []byte
}

func representationOf(name string) representation {
	jsonName := func(prefix string) []byte { return []byte(`"name":"` + prefix) }
	switch name {
	case ReprPretty:
		return representation{name: name, query: "?pretty=true", accept: "application/json",
			needle: func(prefix string) []byte { return []byte(`"name": "` + prefix) }}
	case ReprYAML:
		return representation{name: name, accept: "application/yaml",
			needle: func(prefix string) []byte { return []byte("\n    name: " + prefix) }}
	case ReprTable:
		// Each row carries its object's metadata (includeObject=Metadata, kubectl's default).
		return representation{name: name, accept: "application/json;as=Table;v=v1;g=meta.k8s.io", needle: jsonName}
	case ReprMetadata:
		return representation{name: name, accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", needle: jsonName}
	}
	return representation{name: ReprJSON, accept: "application/json", needle: jsonName}
}

// ScaleRepr is the measurement of one representation other than compact JSON (which is Scale's List,
// Lists and Gets): one unpaged LIST's first byte, then ScaleListClients at once with GETs meanwhile,
// and the memory after them.
type ScaleRepr struct {
	Name  string    `json:"name"`
	List  ScaleList `json:"list"`
	Lists ScaleList `json:"concurrentLists"`
	Gets  ScaleGets `json:"getsDuringLists"`
}

// validRepresentations checks Config.ScaleRepresentations: known names, compact JSON first (the
// measurement the others are set beside), each once. Empty means compact JSON only.
func validRepresentations(names []string) ([]string, error) {
	if len(names) == 0 {
		return []string{ReprJSON}, nil
	}
	out := []string{ReprJSON}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "all" {
			return ScaleRepresentations(), nil
		}
		if !slices.Contains(ScaleRepresentations(), n) {
			return nil, fmt.Errorf("scale representation %q: want some of %q, or all", n, ScaleRepresentations())
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// measureRepresentation runs the LISTs of one representation, alone and ScaleListClients at once,
// and waits, as for compact JSON, for memory to come back.
func measureRepresentation(ctx context.Context, cfg Config, s *server, h httpTarget, r scaleResource, sc *Scale, repr representation) (ScaleRepr, error) {
	m := ScaleRepr{Name: repr.name}
	var err error
	if m.List, err = scaleLists(ctx, s, h, r, repr, 1, sc.Objects, nil); err != nil {
		return m, fmt.Errorf("%s: %w", repr.name, err)
	}
	if m.Lists, m.Gets, err = concurrentLists(ctx, cfg, s, h, r, sc, repr); err != nil {
		return m, fmt.Errorf("%s: %w", repr.name, err)
	}
	cfg.Logger.Info("scale: concurrent unpaged LISTs", "representation", repr.name, "clients", ScaleListClients,
		"firstByte", m.List.FirstByte, "took", m.Lists.Took, "peak", formatBytes(m.Lists.Peak), "getP99", m.Gets.P99)
	m.Lists.After, m.Lists.AfterDelay, m.Lists.Returned, err = waitReturned(ctx, s, sc)
	return m, err
}

// concurrentLists runs ScaleListClients unpaged LISTs at once with GETs meanwhile. A guarded run
// measures again a round whose GET p99 is over its guard and keeps the best (the few GETs of a round
// that takes a fraction of a second make its p99 their slowest); a failed GET of any round fails the
// run whichever round is kept, and the memory judged is the highest reading of them all.
func concurrentLists(ctx context.Context, cfg Config, s *server, h httpTarget, r scaleResource, sc *Scale, repr representation) (best ScaleList, bestGets ScaleGets, err error) {
	failed, firstError, peak := 0, "", int64(0)
	for attempt := 1; ; attempt++ {
		var gets ScaleGets
		lists, err := scaleLists(ctx, s, h, r, repr, ScaleListClients, sc.Objects, &gets)
		if err != nil {
			return best, bestGets, err
		}
		if firstError == "" {
			firstError = gets.FirstError
		}
		failed, peak = failed+gets.Failed, max(peak, lists.Peak)
		if attempt == 1 || gets.P99 < bestGets.P99 {
			best, bestGets = lists, gets
		}
		bestGets.Attempts, bestGets.Failed, bestGets.FirstError, best.Peak = attempt, failed, firstError, peak
		if !sc.Guarded || bestGets.P99 <= ScaleGuardGetP99 || attempt == GuardAttempts {
			return best, bestGets, nil
		}
		cfg.Logger.Info("scale: GET p99 during the concurrent LISTs above the guard; measuring again", "representation", repr.name,
			"p99", gets.P99, "attempt", attempt+1, "of", GuardAttempts)
	}
}

// waitReturned reads memory every second after concurrent LISTs until it is back within
// ScaleReturnTarget of idle (a guarded run stops there) or ScaleReturnWait has passed.
func waitReturned(ctx context.Context, s *server, sc *Scale) (after ScaleMemory, delay time.Duration, returned *time.Duration, err error) {
	began := time.Now()
	for {
		if err := sleep(ctx, time.Second); err != nil {
			return after, delay, returned, err
		}
		m, err := s.scaleMemory()
		if err != nil {
			return after, delay, returned, err
		}
		since := time.Since(began)
		if returned == nil && sc.returned(m) {
			returned = &since
		}
		if since >= ScaleReturnWait || sc.Guarded && returned != nil {
			return m, since, returned, nil
		}
	}
}

// reprRows are a representation's lines of the scale table.
func (sc *Scale) reprRows(m ScaleRepr) [][]string {
	ls, g := m.Lists, m.Gets
	grew := ls.Peak - sc.Idle.RSS
	returned, verdict := fmt.Sprintf("not within %s", ls.AfterDelay.Round(time.Second)), "over target"
	if ls.Returned != nil {
		returned, verdict = ls.Returned.Round(time.Second).String(), "ok"
	}
	return [][]string{
		{fmt.Sprintf("%s: unpaged LIST, 1 client: first byte (last after %s, %s)", m.Name, formatLatency(m.List.Took), formatBytes(m.List.Bytes)),
			formatLatency(m.List.FirstByte), "≤ " + formatLatency(ScaleFirstByteTarget), atMost(int64(m.List.FirstByte), int64(ScaleFirstByteTarget))},
		{fmt.Sprintf("%s: %d concurrent unpaged LISTs: peak RSS over idle (last byte after %s)", m.Name, ls.Clients, formatLatency(ls.Took)),
			fmt.Sprintf("%+.1f MiB", float64(grew)/(1<<20)), "≤ " + formatBytes(ScaleGrowthTarget), atMost(grew, ScaleGrowthTarget)},
		{fmt.Sprintf("%s: GET by name during them, p99 (%d GETs, %d failed)", m.Name, g.Requests, g.Failed),
			formatLatency(g.P99), "≤ " + formatLatency(ScaleGetP99Target), atMost(int64(g.P99), int64(ScaleGetP99Target))},
		{fmt.Sprintf("%s: back within %.0f%% of idle RSS after (RSS %s after: %s)", m.Name, 100*ScaleReturnTarget, ls.AfterDelay.Round(time.Second), sc.overIdle(ls.After.RSS)),
			returned, "≤ " + ScaleReturnWait.String(), verdict},
	}
}

// reprProblems are a representation's failed GETs, and in a guarded run its guards.
func (sc *Scale) reprProblems(m ScaleRepr, guard bool) []error {
	var errs []error
	if m.Gets.Failed > 0 {
		errs = append(errs, fmt.Errorf("scale %s: %d of %d GETs during the concurrent LISTs failed, the first with: %s", m.Name, m.Gets.Failed, m.Gets.Failed+m.Gets.Requests, m.Gets.FirstError))
	}
	if !guard || !sc.Guarded {
		return errs
	}
	if grew := m.Lists.Peak - sc.Idle.RSS; grew > ScaleGuardGrowth {
		errs = append(errs, fmt.Errorf("scale guard, %s: %d concurrent unpaged LISTs grew RSS by %s over idle, more than %s", m.Name, m.Lists.Clients, formatBytes(grew), formatBytes(ScaleGuardGrowth)))
	}
	if m.List.FirstByte > ScaleGuardFirstByte {
		errs = append(errs, fmt.Errorf("scale guard, %s: first byte of an unpaged LIST after %s, more than %s", m.Name, formatLatency(m.List.FirstByte), formatLatency(ScaleGuardFirstByte)))
	}
	if m.Gets.P99 > ScaleGuardGetP99 {
		errs = append(errs, fmt.Errorf("scale guard, %s: GET p99 during %d concurrent unpaged LISTs %s, more than %s", m.Name, m.Lists.Clients, formatLatency(m.Gets.P99), formatLatency(ScaleGuardGetP99)))
	}
	return errs
}
