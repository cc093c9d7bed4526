// Package parse reads what HTTP responses say about rate limits.
package parse
