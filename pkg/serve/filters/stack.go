package filters

import "net/http"

// stackFrame is the frame growStack takes. The runtime grows a stack to the next power of two that
// fits, so a frame of this size leaves the goroutine with a stack of twice as much: enough for
// decoding a body and tracking managed fields without growing again.
const stackFrame = 16 << 10

// WithGrownStack grows the goroutine stack of each request that carries a body once, before
// anything deep runs on it. HTTP/2 serves every request on a new goroutine whose stack starts
// small; decoding a body and tracking managed fields then outgrow it several times over, and each
// growth copies a stack dozens of frames deep (a tenth of an HTTP/2 update's CPU in the profile).
// Growing it while it is shallow costs one short copy, and nothing once the stack is large, as
// HTTP/1.1 connections' reused goroutines' stacks usually are. Reads stream stored bytes and stay
// shallow, so they are left alone: the copy would be most of what it saves them.
func WithGrownStack(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
			growStack(0)
		}
		next.ServeHTTP(w, r)
	})
}

// growStack takes a stackFrame-sized frame. It reads the frame at an index the compiler cannot see,
// so the frame is neither optimised away nor inlined into a caller.
//
//go:noinline
func growStack(i int) byte {
	var frame [stackFrame]byte
	return frame[i]
}
