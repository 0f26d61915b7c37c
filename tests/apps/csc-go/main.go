// rueidis with its default options (client-side caching on: HELLO 3, CLIENT TRACKING ON OPTIN)
// as a line-driven client of tests/apps/test_client_cache.py: it connects to
// 127.0.0.1:$TC_APP_PORT and answers each line of stdin with one JSON line.
//
//	get KEY -> {"v": value or null, "hit": served from the client-side cache}
//	quit    -> exits
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

func emit(v any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func main() {
	client, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress: []string{"127.0.0.1:" + os.Getenv("TC_APP_PORT")},
	})
	if err != nil {
		emit(map[string]any{"error": err.Error()})
		os.Exit(1)
	}
	defer client.Close()
	emit(map[string]any{"ready": true})
	ctx := context.Background()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) != 2 || f[0] != "get" {
			break
		}
		resp := client.DoCache(ctx, client.B().Get().Key(f[1]).Cache(), time.Minute)
		out := map[string]any{"v": nil, "hit": resp.IsCacheHit()}
		if s, err := resp.ToString(); err == nil {
			out["v"] = s
		} else if !rueidis.IsRedisNil(err) {
			out["error"] = err.Error()
		}
		emit(out)
	}
}
