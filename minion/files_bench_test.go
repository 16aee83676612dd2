package minion_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

// BenchmarkRemoteFile fetches a salt:// file from a real master over
// loopback: "cold" with an empty minion cache (every chunk crosses the
// request channel), "cached" with the file cached (one _file_hash
// request).
func BenchmarkRemoteFile(b *testing.B) {
	c := startCluster(b)
	c.start(b, map[string]*ordered.Map{"m1": ordered.New()}, nil)
	for _, size := range []int{4 << 10, 8 << 20} {
		name := filepath.Join("files", "f"+string(rune('a'+size%26)))
		writeFiles(b, c.dir+"/srv", map[string]string{name: string(bytes.Repeat([]byte("x"), size))})
		url := "salt://" + filepath.ToSlash(name)
		cache := filepath.Join(c.confs["m1"].CacheDir, "files")
		get := func(b *testing.B) {
			got, err := c.minions["m1"].FileClient(c.ctx).Get(c.ctx, url, "base")
			if err != nil || len(got) != size {
				b.Fatalf("get: %d bytes, %v", len(got), err)
			}
		}
		b.Run("cold/"+sizeName(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				b.StopTimer()
				os.RemoveAll(cache)
				b.StartTimer()
				get(b)
			}
		})
		b.Run("cached/"+sizeName(size), func(b *testing.B) {
			get(b)
			for b.Loop() {
				get(b)
			}
		})
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return string(rune('0'+n>>20)) + "MiB"
	}
	return string(rune('0'+n>>10)) + "KiB"
}
