package mockserver

import (
	"context"
	"net"
	"net/http"
	"time"
)

// connKey is the request context's key for its connection (http.Server.ConnContext).
type connKey struct{}

// stampListener hands out accepted connections that keep the kernel's receive stamp of
// each request's first bytes (Linux TCP; others as they are).
type stampListener struct{ net.Listener }

func newStampListener(ln net.Listener) stampListener {
	stampListening(ln)
	return stampListener{ln}
}

func (l stampListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return stampConn(c), nil
}

// withConn puts a connection into its requests' context, once a connection.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if rc, ok := c.(*rxConn); ok {
		return context.WithValue(ctx, connKey{}, rc)
	}
	return ctx
}

// rxOf is the stamping connection r came on, or nil.
func rxOf(r *http.Request) *rxConn {
	rc, _ := r.Context().Value(connKey{}).(*rxConn)
	return rc
}

// arrived is when r's first bytes reached the server's socket, by the kernel's stamp
// (kernel true), else user, the handler's own reading.
func arrived(r *http.Request, user time.Time) (at time.Time, kernel bool) {
	if rc := rxOf(r); rc != nil {
		if t, ok := rc.arrival(); ok {
			return t, true
		}
	}
	return user, false
}
