package polite

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// nilRobotsErr is an error type whose Error method dereferences its
// receiver: a typed nil of it, returned as an error (the classic Go slip
// of a RoundTripper that returns a nil *T as error), panics when printed.
type nilRobotsErr struct{ msg string }

func (e *nilRobotsErr) Error() string { return e.msg }

// A Base whose error's Error method panicked (a typed nil *T returned as
// error) made the origin's robots.txt fetch end inside sync.Once with a
// panic: the Once counted as done, so neither the goroutine's recover nor
// the 31 s bound closed the fetch. The request that started it, and every
// later request to the origin, waited until their contexts ended: the
// entry stayed "being fetched" (and unevictable) for good.
func TestRobotsPanickingErrorEndsFetch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bad := robotsRT(func(*http.Request) (*http.Response, error) {
			var err *nilRobotsErr
			return nil, err // a non-nil error whose Error panics
		})
		r := &Robots{UserAgent: "mybot"}
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		_, err := r.check(ctx, bad, robotsReq(t, ctx, "http://a.example/page"))
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("first request: check waited an hour for a robots.txt fetch whose Base failed at once (%v)", err)
		}
		// A day later, with a Base that works: the origin must be fetched
		// again (or answered from what the cache kept), not waited on.
		time.Sleep(25 * time.Hour)
		h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\nDisallow: /\n"})
		ctx2, cancel2 := context.WithTimeout(t.Context(), time.Hour)
		defer cancel2()
		_, err = r.check(ctx2, robotsBase(h), robotsReq(t, ctx2, "http://a.example/page"))
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a day later: check still waits on the fetch that ended 25 h ago (%v); %d fetches by the good Base", err, h.Stats().Fetches)
		}
	})
}

// bigCertDER returns a distinct self-signed certificate of about
// extBytes bytes, as a hostile server presents one per host name.
func bigCertDER(t *testing.T, extBytes int, serial int64) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:    big.NewInt(serial),
		Subject:         pkix.Name{CommonName: "evil.example"},
		NotBefore:       time.Unix(0, 0),
		NotAfter:        time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
		ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 99999, 1}, Value: make([]byte, extBytes)}},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// Robots.MaxOrigins promises the cache holds "at most about 5 KiB an
// origin counted ... whatever the servers send". An unreachable origin's
// entry keeps its fetch's error value, which was weighed by its message
// only. The error net/http returns for a certificate it cannot verify,
// *tls.CertificateVerificationError, has a short message and holds the
// server's whole chain (up to 256 KiB of certificates a handshake, parsed:
// a 200 KB certificate kept about 600 KB on a loopback handshake). A host
// per origin (a wildcard domain) made each counted origin hold hundreds of
// KiB: at the default MaxOrigins, gigabytes.
func TestRobotsKeptErrorWeighsCertificates(t *testing.T) {
	const origins = 40
	base := robotsRT(func(req *http.Request) (*http.Response, error) {
		var i int
		fmt.Sscanf(req.URL.Hostname(), "o%d.example", &i)
		// The certificate the server presents for this host name, read
		// off the handshake: only the error holds it afterwards.
		cert, err := x509.ParseCertificate(bigCertDER(t, 200<<10, int64(i+1)))
		if err != nil {
			return nil, err
		}
		// What crypto/tls returns, and net/http's Transport passes on,
		// when the server's chain does not verify.
		return nil, &tls.CertificateVerificationError{
			UnverifiedCertificates: []*x509.Certificate{cert},
			Err:                    x509.UnknownAuthorityError{},
		}
	})
	r := &Robots{UserAgent: "mybot", MaxOrigins: origins}
	get := func(i int) {
		_, err := r.check(t.Context(), base, robotsReq(t, t.Context(), fmt.Sprintf("https://o%d.example/page", i)))
		var re *RobotsError
		if !errors.As(err, &re) || !re.Unreachable {
			t.Fatalf("origin %d: %v, want an unreachable robots.txt", i, err)
		}
	}
	get(0)
	before := robotsHeap()
	for i := 1; i <= origins; i++ {
		get(i)
	}
	after := robotsHeap()
	runtime.KeepAlive(r)
	counted := r.robotsCache().count.Load()
	per := (int64(after) - int64(before)) / counted
	if per > 16<<10 {
		t.Errorf("the robots.txt cache keeps %d bytes an origin counted (%d counted, MaxOrigins %d), want about 5 KiB whatever the servers send", per, counted, origins)
	}
}

// selfPanicErr's Error panics with itself: fmt cannot render it either
// (a nested panic in fmt's catchPanic re-panics), so printing it in the
// recover of an Error that panicked panicked in turn.
type selfPanicErr struct{ _ byte }

func (e *selfPanicErr) Error() string { panic(e) }

// A Base whose error's Error panicked with the error itself (which fmt
// cannot print either) made the fetch's end panic: finish closed done and
// end woke the entry in their defers, but the goroutine's recover then
// found the Once spent, so no panic and no abandon was recorded. The
// waiting request saw done closed, nothing recorded and the entry not
// fetched, and fetched again: one robots.txt request after another, with
// no wait, until its context ended.
func TestRobotsSelfPanickingErrorFetchesOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		var fetches atomic.Int64
		base := robotsRT(func(*http.Request) (*http.Response, error) {
			if fetches.Add(1) >= 50 {
				cancel() // stop the loop
				return nil, errors.New("stop")
			}
			return nil, &selfPanicErr{}
		})
		r := &Robots{UserAgent: "mybot"}
		func() {
			defer func() { _ = recover() }() // a panic going on in the request is fine
			r.check(ctx, base, robotsReq(t, ctx, "http://a.example/page"))
		}()
		if n := fetches.Load(); n > 2 {
			t.Errorf("one check sent %d robots.txt requests back to back (no wait, no backoff); want at most 2", n)
		}
	})
}
