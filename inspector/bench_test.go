package inspector

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/mcptape/mcptape/inspector/internal/gen"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// Benchmarks over a generated 1,000,000-message cassette, cached in
// os.TempDir by generator version (the first run takes a while):
//
//	go test -run '^$' -bench . -benchtime 3x ./inspector
//
// Each reports its own figure and a ratio to a baseline measured in the
// same run: a bare scan of every summary (no model), or the same work on a
// 1,000-message cassette.

const bigN = 1_000_000

var (
	bigOnce sync.Once
	bigPath string
	bigErr  error
)

func cachedCassette(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("mcptape-inspector-bench-%s-%d.db", gen.Version, n))
	if err := store.Check(path); err == nil {
		return path
	}
	b.Logf("generating %d messages into %s", n, path)
	tmp := path + ".tmp"
	os.Remove(tmp)
	if err := gen.Cassette(tmp, n, 250_000); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	return path
}

func big(b *testing.B) string {
	bigOnce.Do(func() { bigPath = cachedCassette(b, bigN) })
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigPath
}

// rawScan is the baseline: one pass over every summary, keeping nothing.
func rawScan(b *testing.B, path string) time.Duration {
	start := time.Now()
	n := 0
	err := store.View(path, func(r *store.Reader) error {
		infos, err := r.Sessions()
		if err != nil {
			return err
		}
		for _, info := range infos {
			if err := r.RawSummaries(info.ID, 1, 0, func(*store.RawSummary) error { n++; return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || n == 0 {
		b.Fatalf("raw scan: %d, %v", n, err)
	}
	return time.Since(start)
}

// firstPaint is the child process's report.
type firstPaint struct {
	NS    int64 `json:"ns"`
	RSSkB int64 `json:"rss_kb"`
	Rows  int   `json:"rows"`
}

// BenchmarkOpenToFirstPaint opens the big cassette in a fresh process (so
// peak RSS is the inspector's alone) and times open → first paint.
func BenchmarkOpenToFirstPaint(b *testing.B) {
	path := big(b)
	base := rawScan(b, path)
	var total, rss int64
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestBenchChildFirstPaint$", "-test.v")
		cmd.Env = append(os.Environ(), "MCPTAPE_BENCH_CASSETTE="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		var fp firstPaint
		found := false
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "FIRSTPAINT "); ok {
				found = json.Unmarshal([]byte(rest), &fp) == nil
			}
		}
		if !found || fp.Rows != bigN {
			b.Fatalf("child output:\n%s", out)
		}
		total += fp.NS
		rss = max(rss, fp.RSSkB)
	}
	b.ReportMetric(float64(total)/float64(b.N), "ns/paint")
	b.ReportMetric(float64(rss)/1024, "MB-peak-RSS")
	b.ReportMetric(float64(total)/float64(b.N)/float64(base), "x-raw-scan")
	b.ReportMetric(0, "ns/op")
}

// TestBenchChildFirstPaint is the child of BenchmarkOpenToFirstPaint; it
// does nothing in a normal test run.
func TestBenchChildFirstPaint(t *testing.T) {
	path := os.Getenv("MCPTAPE_BENCH_CASSETTE")
	if path == "" {
		return
	}
	start := time.Now()
	m, src, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sim := tcell.NewSimulationScreen("UTF-8")
	a := New(m, src, Options{Screen: sim})
	painted := make(chan time.Duration, 1)
	a.app.SetAfterDrawFunc(func(tcell.Screen) {
		select {
		case painted <- time.Since(start):
		default:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	d := <-painted
	cancel()
	<-done
	fmt.Printf("FIRSTPAINT {\"ns\":%d,\"rss_kb\":%d,\"rows\":%d}\n", d.Nanoseconds(), peakRSS(), m.Len())
}

// peakRSS reads VmHWM, the process's peak resident set, in kB.
func peakRSS() int64 {
	kb, ok := peertest.StatusKB(os.Getpid(), "VmHWM")
	if !ok {
		return -1
	}
	return int64(kb)
}

// BenchmarkFilter filters the big cassette; the ratio is to a bare scan
// of the summaries.
func BenchmarkFilter(b *testing.B) {
	path := big(b)
	m, src, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	base := rawScan(b, path)
	for _, expr := range []string{
		"tool:echo error",
		"method:tools/* kind:response slow:>100ms",
		"!kind:notification dir:s2c session:s2",
		"request number 4242", // free text: reads every frame
	} {
		b.Run(expr, func(b *testing.B) {
			f, err := ParseFilter(expr)
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if err := m.SetFilter(f, src); err != nil {
					b.Fatal(err)
				}
				if err := m.SetFilter(nil, src); err != nil {
					b.Fatal(err)
				}
			}
			per := time.Since(start) / time.Duration(b.N)
			b.ReportMetric(float64(per.Nanoseconds()), "ns/filter")
			b.ReportMetric(float64(per)/float64(base), "x-raw-scan")
		})
	}
}

// BenchmarkScroll moves the selection a page and redraws the table and
// detail pane, on the big cassette and on a small one side by side: the
// ratio near 1 shows that a draw costs what is on screen.
func BenchmarkScroll(b *testing.B) {
	small := cachedCassette(b, 1000)
	perDraw := map[string]time.Duration{}
	for _, c := range []struct {
		name string
		path string
	}{{"1k", small}, {"1M", big(b)}} {
		b.Run(c.name, func(b *testing.B) {
			m, src, err := Open(c.path)
			if err != nil {
				b.Fatal(err)
			}
			sim := tcell.NewSimulationScreen("UTF-8")
			if err := sim.Init(); err != nil {
				b.Fatal(err)
			}
			sim.SetSize(80, 24)
			a := New(m, src, Options{Screen: sim})
			a.pages.SetRect(0, 0, 80, 24)
			rows := m.Visible()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				a.table.Select(1+(i*20)%rows, 0) // a page further each time
				a.pages.Draw(sim)
			}
			per := time.Since(start) / time.Duration(b.N)
			perDraw[c.name] = per
			b.ReportMetric(float64(per.Nanoseconds()), "ns/page")
			if c.name == "1M" && perDraw["1k"] > 0 {
				b.ReportMetric(float64(per)/float64(perDraw["1k"]), "x-1k-cassette")
			}
		})
	}
}
