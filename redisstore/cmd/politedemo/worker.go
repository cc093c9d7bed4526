package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/redisstore"
	"github.com/redis/go-redis/v9"
)

// workerEnv carries a worker process's job, as JSON: a demo re-runs its
// own executable with it set.
const workerEnv = "POLITEDEMO_WORKER"

// job is what one worker process does.
type job struct {
	Name    string        `json:"name"`
	URL     string        `json:"url"`
	Redis   string        `json:"redis"`  // address; "" for an in-memory budget
	Prefix  string        `json:"prefix"` // of the Redis keys
	Tasks   int           `json:"tasks"`
	Workers int           `json:"workers"`
	Lease   time.Duration `json:"lease"`   // Budget.Lease; 0 for the default
	Start   time.Time     `json:"start"`   // when to send the first request
	Timeout time.Duration `json:"timeout"` // of each task; 0 for none
	Gap     time.Duration `json:"gap"`     // a worker's pause after each task
}

// report is what one worker process saw.
type report struct {
	Name      string           `json:"name"`
	OK        int              `json:"ok"`     // tasks answered 2xx
	Failed    int              `json:"failed"` // tasks answered otherwise
	Errors    int              `json:"errors"` // tasks with no response
	Retries   int              `json:"retries"`
	StoreDown int              `json:"store_down"` // EventStoreDown seen
	StoreUp   int              `json:"store_up"`
	Calls     int64            `json:"calls"` // Redis commands sent on requests' paths
	Store     redisstore.Stats `json:"store"`
	Wall      time.Duration    `json:"wall"`
	Latencies []time.Duration  `json:"latencies"` // of each task, sorted
}

// countHook counts the commands a Redis client sends.
type countHook struct{ n atomic.Int64 }

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name == "hello" || name == "client" {
			return next(ctx, cmd) // a new connection's handshake
		}
		h.n.Add(1)
		return next(ctx, cmd)
	}
}
func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if name := cmd.Name(); name != "hello" && name != "client" {
				h.n.Add(1) // not only a new connection's handshake
				break
			}
		}
		return next(ctx, cmds)
	}
}

// runWorker runs the job in $POLITEDEMO_WORKER and prints its report.
func runWorker(spec string, stdout, stderr io.Writer) error {
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		return fmt.Errorf("worker job: %v", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	redis.SetLogger(quiet{}) // the Budget reports failures, once per transition
	budget := &polite.Budget{Lease: j.Lease}
	var hook countHook
	var store *redisstore.Store
	if j.Redis != "" {
		rdb := redis.NewClient(&redis.Options{
			Addr:                  j.Redis,
			ContextTimeoutEnabled: true, // so that Store.Timeout holds
			MaxRetries:            -1,   // the Budget falls back instead
			DialTimeout:           250 * time.Millisecond,
		})
		defer rdb.Close()
		rdb.AddHook(&hook)
		st := redisstore.New(rdb, j.Prefix)
		defer st.Close()
		budget.Store, store = st, st
	}
	var rep report
	var mu sync.Mutex
	tr := &polite.Transport{
		Budget: budget,
		Base:   &http.Transport{MaxIdleConnsPerHost: j.Workers},
		OnEvent: func(e polite.Event) {
			mu.Lock()
			defer mu.Unlock()
			switch e.Kind {
			case polite.EventRetry:
				rep.Retries++
			case polite.EventStoreDown:
				rep.StoreDown++
				log.Warn(j.Name+": Redis failed; pacing from memory", "err", e.Err)
			case polite.EventStoreUp:
				rep.StoreUp++
				log.Info(j.Name + ": Redis answers again; pacing shared")
			}
		},
	}
	client := &http.Client{Transport: tr}

	tasks := make(chan int, j.Tasks)
	for i := range j.Tasks {
		tasks <- i
	}
	close(tasks)
	time.Sleep(time.Until(j.Start))
	start := time.Now()
	var wg sync.WaitGroup
	for range j.Workers {
		wg.Go(func() {
			for range tasks {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if j.Timeout > 0 {
					ctx, cancel = context.WithTimeout(ctx, j.Timeout)
				}
				t0 := time.Now()
				status := get(ctx, client, j.URL, j.Name)
				d := time.Since(t0)
				cancel()
				mu.Lock()
				switch {
				case status == 0:
					rep.Errors++
				case status/100 == 2:
					rep.OK++
				default:
					rep.Failed++
				}
				rep.Latencies = append(rep.Latencies, d)
				mu.Unlock()
				time.Sleep(j.Gap)
			}
		})
	}
	wg.Wait()
	rep.Name, rep.Wall, rep.Calls = j.Name, time.Since(start), hook.n.Load()
	slices.Sort(rep.Latencies)
	if store != nil {
		rep.Store = store.Stats()
	}
	return json.NewEncoder(stdout).Encode(rep)
}

// get sends one GET and returns its status; 0 when there was no response.
func get(ctx context.Context, client *http.Client, url, name string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	req.Header.Set(procHeader, name)
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// procHeader names the worker process of a request, for the server's records.
const procHeader = "Politedemo-Process"

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
