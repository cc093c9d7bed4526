module github.com/politehttp/polite

go 1.25.0

require (
	github.com/cenkalti/backoff/v4 v4.3.0
	github.com/dunglas/httpsfv v1.1.2
	go.uber.org/goleak v1.3.0
)
