package polite

import (
	_ "github.com/cenkalti/backoff/v4"
	_ "github.com/dunglas/httpsfv"
	_ "golang.org/x/time/rate"
)
