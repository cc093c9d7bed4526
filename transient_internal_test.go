package polite

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"
)

// timeoutErr is a net.Error that timed out, as a dial or read deadline
// gives.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestTransientErr(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"connection reset", nil, reset, true},
		{"connection aborted", nil, &net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.ECONNABORTED)}, true},
		{"broken pipe", nil, fmt.Errorf("net/http: %w", os.NewSyscallError("write", syscall.EPIPE)), true},
		{"EOF", nil, fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", io.EOF), true},
		{"unexpected EOF", nil, io.ErrUnexpectedEOF, true},
		{"dial refused", nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true},
		{"dns timeout", nil, &net.OpError{Op: "dial", Err: &net.DNSError{Err: "timeout", Name: "api.example", IsTimeout: true}}, true},
		{"dns temporary", nil, &net.OpError{Op: "dial", Err: &net.DNSError{Err: "server misbehaving", Name: "api.example", IsTemporary: true}}, true},
		{"dns no such host", nil, &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "api.example", IsNotFound: true}}, false},
		{"read timeout", nil, &net.OpError{Op: "read", Err: timeoutErr{}}, true},
		{"context ended, reset", ended, reset, false},
		{"context deadline", ended, context.DeadlineExceeded, false},
		{"context canceled", nil, context.Canceled, false},
		{"unknown authority", nil, &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, false},
		{"bare hostname error", nil, x509.HostnameError{Host: "api.example"}, false},
		{"record header", nil, tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, false},
		{"scheme mismatch", nil, fmt.Errorf("%w: %w", http.ErrSchemeMismatch, io.EOF), false},
		{"url error", nil, &url.Error{Op: "Get", URL: "http://api.example/", Err: reset}, false},
		{"bad address", nil, &net.OpError{Op: "dial", Err: &net.AddrError{Err: "missing port in address", Addr: "api.example"}}, false},
		{"malformed response", nil, errors.New(`net/http: HTTP/1.x transport connection broken: malformed HTTP response "hello"`), false},
		{"wait error", nil, &WaitError{Key: "http://api.example"}, false},
		{"nil", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			if got := transientErr(ctx, tt.err); got != tt.want {
				t.Errorf("transientErr(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// The errors net/http itself returns over loopback are classified as the
// table says: a reset, a connection closed before the answer, a refused
// dial; and a context that ended, and a certificate nobody signed, never.
func TestTransientErrOverLoopback(t *testing.T) {
	hijack := func(linger bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok && linger {
				tc.SetLinger(0) // close with RST
			}
			conn.Close()
		}
	}
	reset := httptest.NewServer(hijack(true))
	defer reset.Close()
	closed := httptest.NewServer(hijack(false))
	defer closed.Close()
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Until the client gives up; bounded, so that Close never
		// waits on a handler whose client's close went unnoticed.
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer slow.Close()
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake fails, by design
	tlsSrv.StartTLS()
	defer tlsSrv.Close()

	tests := []struct {
		name    string
		url     string
		timeout time.Duration // of the context
		header  time.Duration // http.Transport.ResponseHeaderTimeout
		want    bool
	}{
		{"reset", reset.URL, 0, 0, true},
		{"closed before the answer", closed.URL, 0, 0, true},
		{"refused", refusedURL, 0, 0, true},
		{"context deadline", slow.URL, 50 * time.Millisecond, 0, false},
		{"response header timeout", slow.URL, 0, 50 * time.Millisecond, true},
		{"unknown authority", tlsSrv.URL, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &http.Transport{DisableKeepAlives: true, ResponseHeaderTimeout: tt.header}
			defer tr.CloseIdleConnections()
			ctx := t.Context()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, tt.url, nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("%s: no error", tt.url)
			}
			t.Logf("%v", err)
			if got := transientErr(ctx, err); got != tt.want {
				t.Errorf("transientErr(%v) = %v, want %v", err, got, tt.want)
			}
		})
	}
}
