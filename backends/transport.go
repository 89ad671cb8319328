package backends

import (
	"context"
	"net"
	"net/http"
	"time"
)

// NewTransport is the HTTP transport each backend shares among all its requests. It is
// tuned so the client is never the bottleneck at thousands of concurrent streams:
// enough idle keep-alive connections per host that none is closed and redialled between
// requests, large read buffers, and no transparent gzip (a gzipped SSE stream would be
// buffered by the server's compressor and distort arrival times).
func NewTransport(t Timeouts) *http.Transport { return newTransport(t, nil) }

// newTransport is NewTransport whose connections bind source (nil: any).
func newTransport(t Timeouts, source net.Addr) *http.Transport {
	dialer := &rxDialer{Dialer: net.Dialer{Timeout: t.Connect, KeepAlive: 30 * time.Second, LocalAddr: source}}
	return &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         dialer.DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        0, // no global limit
		MaxIdleConnsPerHost: 8192,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: t.Connect,
		DisableCompression:  true,
		ReadBufferSize:      32 << 10,
		WriteBufferSize:     16 << 10,
	}
}

// rxDialer dials TCP connections with kernel receive timestamps on (see rxConn) that
// can hold a paced request's first write for its turn (turnConn).
type rxDialer struct{ net.Dialer }

func (d *rxDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.Dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return newTurnConn(timestampConn(c)), nil
}
