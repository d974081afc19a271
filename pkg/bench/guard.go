package bench

// GuardAttempts is how many times, at most, a guarded run measures an operation whose ratio fell
// below its floor. Noise on a shared machine only ever slows a measurement down, so a ratio that
// reaches its floor once shows the code can; a gross regression stays below it every time.
const GuardAttempts = 3

// Floored lists the operations with a ratio below its floor or without data, each once, in the
// order their ratios appear.
func (r *Report) Floored() []Operation {
	var ops []Operation
	seen := map[Operation]bool{}
	for _, ra := range r.Ratios {
		if v := ra.Verdict(); (v == "BELOW FLOOR" || v == "no data") && !seen[ra.Operation] {
			seen[ra.Operation] = true
			ops = append(ops, ra.Operation)
		}
	}
	return ops
}

// KeepBest takes from again, a run that measured some operations once more, each operation's
// measurements at a concurrency whenever they fare better than r's: all of them together (both
// paths and their etcd counterpart), so that every ratio printed is computed from the rates printed
// beside it. Better is a larger worst ratio-to-floor over the paths. Every ratio again measured
// counts the attempt.
func (r *Report) KeepBest(again *Report) {
	type group struct {
		op Operation
		c  int
	}
	worst := func(rep *Report) map[group]float64 {
		m := map[group]float64{}
		for _, ra := range rep.Ratios {
			g := group{ra.Operation, ra.Concurrency}
			v := 0.0
			if ra.Verdict() != "no data" {
				v = ra.Value / ra.Floor()
			}
			if old, ok := m[g]; !ok || v < old {
				m[g] = v
			}
		}
		return m
	}
	mine, theirs := worst(r), worst(again)
	attempts := map[group]int{}
	for _, ra := range r.Ratios {
		attempts[group{ra.Operation, ra.Concurrency}] = max(ra.Attempts, 1) + 1
	}
	for g, v := range theirs {
		if _, ok := mine[g]; ok && v > mine[g] {
			r.replace(again, g.op, g.c)
		}
	}
	for i := range r.Ratios {
		g := group{r.Ratios[i].Operation, r.Ratios[i].Concurrency}
		if _, ok := theirs[g]; ok {
			r.Ratios[i].Attempts = attempts[g]
		}
	}
}

// replace copies from again the results and ratios of op at concurrency c, and the etcd results
// those ratios were computed against.
func (r *Report) replace(again *Report, op Operation, c int) {
	against := map[Operation]bool{}
	for _, ra := range again.Ratios {
		if ra.Operation == op && ra.Concurrency == c {
			against[ra.Against] = true
		}
	}
	for i, res := range r.Results {
		if res.Concurrency != c || !(res.Operation == op && res.Via != ViaEtcd || res.Via == ViaEtcd && against[res.Operation]) {
			continue
		}
		for _, a := range again.Results {
			if a.Operation == res.Operation && a.Via == res.Via && a.Concurrency == c {
				r.Results[i] = a
			}
		}
	}
	for i, ra := range r.Ratios {
		if ra.Operation != op || ra.Concurrency != c {
			continue
		}
		for _, a := range again.Ratios {
			if a.Operation == op && a.Via == ra.Via && a.Concurrency == c {
				r.Ratios[i] = a
			}
		}
	}
}
