package main

import (
	"flag"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The crawl command exits 1, and prints why, when a page could not be
// fetched: the start URL answers 500, or its host refuses connections (so
// that robots.txt is unreachable, a failure, not a rule that disallows).
// It exited 0, and counted the refused host as "not sent (robots.txt)".
func TestCrawlExitStatusOnFailure(t *testing.T) {
	if os.Getenv("CRAWL_TEST_MAIN") == "1" {
		os.Args = []string{"crawl", os.Getenv("CRAWL_TEST_URL")}
		flag.CommandLine = flag.NewFlagSet("crawl", flag.ExitOnError)
		main()
		os.Exit(0)
	}
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	defer broken.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close()
	for _, u := range []string{broken.URL + "/", refused} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrawlExitStatusOnFailure$")
		cmd.Env = append(os.Environ(), "CRAWL_TEST_MAIN=1", "CRAWL_TEST_URL="+u)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("crawl %s exited 0 though no page could be fetched; output:\n%s", u, out)
		}
		if !strings.Contains(string(out), "0 not sent (robots.txt), 1 errors") || !strings.Contains(string(out), u) {
			t.Errorf("crawl %s: want the failure printed and counted as an error; output:\n%s", u, out)
		}
	}
}
