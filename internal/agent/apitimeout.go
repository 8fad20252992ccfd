package agent

import (
	"context"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// withAPIDeadline returns a copy of rc whose requests, except watches, each end after timeout: the
// deadline is set per request on its context, never as the HTTP client's Timeout, which would also end
// the pod informer's watch every timeout. A timeout of 0 sets none.
func withAPIDeadline(rc *rest.Config, timeout time.Duration) *rest.Config {
	rc = rest.CopyConfig(rc)
	rc.Timeout = 0
	if timeout > 0 {
		rc.WrapTransport = transport.Wrappers(rc.WrapTransport, func(rt http.RoundTripper) http.RoundTripper {
			return &deadlineTransport{rt: rt, timeout: timeout}
		})
	}
	return rc
}

// deadlineTransport gives every request that is not a watch a deadline of timeout from its start to
// the end of its body.
type deadlineTransport struct {
	rt      http.RoundTripper
	timeout time.Duration
}

func (d *deadlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if isWatch(req) {
		return d.rt.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), d.timeout)
	resp, err := d.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// WrappedRoundTripper lets client-go's debugging and cancellation helpers see through the wrapper.
func (d *deadlineTransport) WrappedRoundTripper() http.RoundTripper { return d.rt }

// isWatch reports whether req is a watch (?watch=true, also a streaming list's sendInitialEvents):
// a long-running request that must not be cut.
func isWatch(req *http.Request) bool {
	switch req.URL.Query().Get("watch") {
	case "true", "1":
		return true
	}
	return false
}

// cancelOnClose releases the request's deadline when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
