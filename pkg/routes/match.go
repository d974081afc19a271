package routes

import (
	"fmt"
	"slices"
	"strings"
)

// Params are the path parameters of a matched route.
type Params struct {
	// Namespace and Name are the {namespace} and {name} segments.
	Namespace string
	Name      string
	// Subpath is what {path:*} matched: the rest of the path without its leading slash, possibly
	// empty (/healthz/etcd gives "etcd").
	Subpath string
}

// Match is the result of Matcher.Match.
type Match struct {
	// Route is the matched route, nil if none has this method and path.
	Route *Route
	// Params are the route's path parameters.
	Params Params
	// PathFound is true when the path exists but not with this method: answer 405 with Allow.
	PathFound bool
	// Allow lists the methods the path does answer, as the Allow header wants them ("GET, PUT").
	Allow string
}

// Matcher maps a request's method and path to its route. Build it once from a table with
// NewMatcher; Match is safe for concurrent use, uses no regular expressions and does not allocate.
// Literal segments win over {params}, which win over {path:*}; a path that fails with a trailing
// slash is tried once without it, as go-restful does for kube.
type Matcher struct {
	routes []Route
	root   *node
}

// maxCaptures bounds the {param} segments of a path; resource paths have at most two
// ({namespace} and {name}).
const maxCaptures = 4

type paramKind uint8

const (
	paramOther paramKind = iota
	paramNamespace
	paramName
)

type node struct {
	literal  map[string]*node
	param    *node
	wildcard *leaf
	leaf     *leaf
}

type leaf struct {
	methods []methodRoute
	allow   string
}

type methodRoute struct {
	method string
	route  *Route
	params []paramKind
}

// NewMatcher indexes the routes of t. Two routes with the same method and path are an error.
func NewMatcher(t Table) (*Matcher, error) {
	m := &Matcher{routes: slices.Clone(t.Routes), root: &node{}}
	var leaves []*leaf
	for i := range m.routes {
		r := &m.routes[i]
		if !strings.HasPrefix(r.Path, "/") {
			return nil, fmt.Errorf("route %s %s: the path must start with /", r.Method, r.Path)
		}
		n := m.root
		var params []paramKind
		var target **leaf
		segs := strings.Split(r.Path[1:], "/")
		if r.Path == "/" {
			segs = nil
		}
		for si, seg := range segs {
			switch {
			case seg == "{path:*}":
				if si != len(segs)-1 {
					return nil, fmt.Errorf("route %s %s: {path:*} must be the last segment", r.Method, r.Path)
				}
				target = &n.wildcard
			case strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}"):
				if len(params) == maxCaptures {
					return nil, fmt.Errorf("route %s %s: more than %d parameters", r.Method, r.Path, maxCaptures)
				}
				switch seg {
				case "{namespace}":
					params = append(params, paramNamespace)
				case "{name}":
					params = append(params, paramName)
				default:
					params = append(params, paramOther)
				}
				if n.param == nil {
					n.param = &node{}
				}
				n = n.param
			default:
				if n.literal == nil {
					n.literal = map[string]*node{}
				}
				child := n.literal[seg]
				if child == nil {
					child = &node{}
					n.literal[seg] = child
				}
				n = child
			}
		}
		if target == nil {
			target = &n.leaf
		}
		if *target == nil {
			*target = &leaf{}
			leaves = append(leaves, *target)
		}
		l := *target
		for _, mr := range l.methods {
			if mr.method == r.Method {
				return nil, fmt.Errorf("route %s %s is in the table twice (also %s)", r.Method, r.Path, mr.route.Path)
			}
		}
		l.methods = append(l.methods, methodRoute{method: r.Method, route: r, params: params})
	}
	for _, l := range leaves {
		methods := make([]string, len(l.methods))
		for i, mr := range l.methods {
			methods[i] = mr.method
		}
		slices.Sort(methods)
		l.allow = strings.Join(methods, ", ")
	}
	return m, nil
}

// matchState collects what a walk learns besides the route.
type matchState struct {
	caps    [maxCaptures]string
	subpath string
	// first is the first leaf (in priority order) whose path matched, for 405 answers.
	first *leaf
}

// Match finds the route for method and path (the request's URL path, already unescaped).
func (m *Matcher) Match(method, path string) Match {
	if path == "" || path[0] != '/' {
		return Match{}
	}
	var st matchState
	mr := m.find(method, path, &st)
	if mr == nil && st.first == nil && len(path) > 1 && path[len(path)-1] == '/' {
		mr = m.find(method, path[:len(path)-1], &st)
	}
	if mr == nil {
		if st.first != nil {
			return Match{PathFound: true, Allow: st.first.allow}
		}
		return Match{}
	}
	res := Match{Route: mr.route, PathFound: true, Allow: st.first.allow}
	for i, k := range mr.params {
		switch k {
		case paramNamespace:
			res.Params.Namespace = st.caps[i]
		case paramName:
			res.Params.Name = st.caps[i]
		}
	}
	res.Params.Subpath = st.subpath
	return res
}

func (m *Matcher) find(method, path string, st *matchState) *methodRoute {
	if path == "/" {
		return walk(m.root, method, "", true, 0, st)
	}
	return walk(m.root, method, path[1:], false, 0, st)
}

// walk matches rest (the path after the segments consumed so far, without its leading slash)
// below n. end says that nothing is left, not even an empty segment after a trailing slash.
func walk(n *node, method, rest string, end bool, ncap int, st *matchState) *methodRoute {
	if end {
		return n.leaf.route(method, st)
	}
	seg, next, nextEnd := rest, "", true
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		seg, next, nextEnd = rest[:i], rest[i+1:], false
	}
	if child := n.literal[seg]; child != nil {
		if mr := walk(child, method, next, nextEnd, ncap, st); mr != nil {
			return mr
		}
	}
	if n.param != nil && seg != "" && ncap < maxCaptures {
		st.caps[ncap] = seg
		if mr := walk(n.param, method, next, nextEnd, ncap+1, st); mr != nil {
			return mr
		}
	}
	if mr := n.wildcard.route(method, st); mr != nil {
		st.subpath = rest
		return mr
	}
	return nil
}

// route returns the route of l for method, noting l as a path match either way.
func (l *leaf) route(method string, st *matchState) *methodRoute {
	if l == nil {
		return nil
	}
	if st.first == nil {
		st.first = l
	}
	for i := range l.methods {
		if l.methods[i].method == method {
			if st.first != l {
				// A later leaf answered; the Allow header must describe the path that matched.
				st.first = l
			}
			return &l.methods[i]
		}
	}
	return nil
}
