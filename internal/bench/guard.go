package bench

// GuardAttempts is how many times, at most, a guarded run measures an operation whose ratio fell
// below its floor. Noise on a shared machine only ever slows a measurement down, so a ratio that
// reaches its floor once shows the code can; a gross regression stays below it every time.
const GuardAttempts = 3

// failsGuard says whether the guard fails on this ratio: below its floor, or without data.
func (r Ratio) failsGuard() bool {
	v := r.Verdict()
	return v == "BELOW FLOOR" || v == "no data"
}

// Floored lists the operations with a ratio that fails the guard, each once, in the order their
// ratios appear.
func (r *Report) Floored() []Operation {
	var ops []Operation
	seen := map[Operation]bool{}
	for _, ra := range r.Ratios {
		if ra.failsGuard() && !seen[ra.Operation] {
			seen[ra.Operation] = true
			ops = append(ops, ra.Operation)
		}
	}
	return ops
}

// KeepBest takes from again, a run that measured some operations once more, each operation's
// measurements at a concurrency whenever they fare better than r's: all of them together (both
// paths and their etcd counterpart), so that every ratio printed is computed from the rates printed
// beside it. Better is a larger worst ratio-to-floor over the paths (a ratio without data is 0).
// Every ratio again measured counts the attempt.
func (r *Report) KeepBest(again *Report) {
	type group struct {
		op Operation
		c  int
	}
	worst := func(rep *Report) map[group]float64 {
		m := map[group]float64{}
		for _, ra := range rep.Ratios {
			g := group{ra.Operation, ra.Concurrency}
			if v, ok := m[g]; !ok || ra.Value/ra.Floor() < v {
				m[g] = ra.Value / ra.Floor()
			}
		}
		return m
	}
	mine, theirs := worst(r), worst(again)
	for g, v := range theirs {
		if old, ok := mine[g]; ok && v > old {
			r.replace(again, g.op, g.c)
		}
	}
	for i := range r.Ratios {
		if _, ok := theirs[group{r.Ratios[i].Operation, r.Ratios[i].Concurrency}]; ok {
			r.Ratios[i].Attempts = max(r.Ratios[i].Attempts, 1) + 1
		}
	}
}

// replace copies from again the results and ratios of op at concurrency c, keeping the count of
// attempts, and the etcd results those ratios were computed against.
func (r *Report) replace(again *Report, op Operation, c int) {
	var against Operation
	for i, ra := range r.Ratios {
		if ra.Operation != op || ra.Concurrency != c {
			continue
		}
		against = ra.Against
		for _, a := range again.Ratios {
			if a.Operation == op && a.Via == ra.Via && a.Concurrency == c {
				a.Attempts = ra.Attempts
				r.Ratios[i] = a
			}
		}
	}
	for i, res := range r.Results {
		if res.Concurrency != c || !(res.Operation == op && res.Via != ViaEtcd || res.Via == ViaEtcd && res.Operation == against) {
			continue
		}
		for _, a := range again.Results {
			if a.Operation == res.Operation && a.Via == res.Via && a.Concurrency == c {
				r.Results[i] = a
			}
		}
	}
}
