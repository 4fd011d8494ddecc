package store

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkCheckTree: what the page-tree walk (checkTree) adds to every
// open for reading, as a share of loading the whole cassette (Load, what
// mcpmock does before its first answer), on 200k messages: the 100k
// interactions of #4's time-to-first-answer target. Both are timed in
// turns in one run.
//
//	go test -run '^$' -bench CheckTree -benchtime 20x ./store/
func BenchmarkCheckTree(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.db")
	if _, err := Import(path, markedTape(66_667)); err != nil {
		b.Fatal(err)
	}
	db, file, err := openDBFile(path, false)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.ResetTimer()
	var walk, load time.Duration
	for range b.N {
		t0 := time.Now()
		if err := db.View(func(tx *bolt.Tx) error { return checkTree(path, file, tx, false) }); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
		walk, load = walk+t1.Sub(t0), load+time.Since(t1)
	}
	b.ReportMetric(float64(walk.Microseconds())/1000/float64(b.N), "walk-ms")
	b.ReportMetric(float64(load.Microseconds())/1000/float64(b.N), "load-ms")
	b.ReportMetric(walk.Seconds()/load.Seconds(), "walk/load")
}
