// Package typo finds the name a mistyped one most likely meant, for "did you mean" hints.
package typo

// Nearest returns the candidate nearest to s by edit distance, if it is near enough to be a typo:
// two edits, or three in a name longer than eight. Among equally near candidates the first wins.
func Nearest(s string, candidates []string) string {
	best, bestDist := "", len(s)
	for _, c := range candidates {
		if d := Distance(s, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist <= 2 || (bestDist <= 3 && len(s) > 8) {
		return best
	}
	return ""
}

// Distance is the Levenshtein distance, with a transposition counted as one edit so that
// "secure-prot" is one step from "secure-port".
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
