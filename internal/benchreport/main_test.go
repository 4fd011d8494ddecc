package main

import "testing"

func TestParse(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkHTTPRoundTrip/clients=16-2         	    2000	    592087 ns/op	      3740 direct_rt/s	 0.8241 ratio
BenchmarkWriter_Record1KiB/fsync=false-2    	  200000	       277.0 ns/op	3697.17 MB/s	     58894 msgs/s
BenchmarkOpenToFirstPaint                   	       3	 0 ns/op	 412345678 ns/paint
BenchmarkHTTPRoundTrip/clients=16-2         	    2000	    592087 ns/op	      3700 direct_rt/s	 0.8100 ratio
BenchmarkHTTPRoundTrip/clients=16-2         	    2000	    592087 ns/op	      3800 direct_rt/s	 0.8700 ratio
PASS
`)
	got := parse(out)
	tests := []struct {
		bench, metric string
		want          float64
	}{
		{"BenchmarkHTTPRoundTrip/clients=16", "ratio", 0.8241},
		{"BenchmarkHTTPRoundTrip/clients=16", "direct_rt/s", 3740}, // three runs: the median
		{"BenchmarkWriter_Record1KiB/fsync=false", "msgs/s", 58894},
		{"BenchmarkOpenToFirstPaint", "ns/paint", 412345678},
	}
	for _, tt := range tests {
		if v, ok := median(got[tt.bench])[tt.metric]; !ok || v != tt.want {
			t.Errorf("%s %s = %v (%v), want %v", tt.bench, tt.metric, v, ok, tt.want)
		}
	}
	if len(got) != 3 {
		t.Errorf("parsed %d benchmarks, want 3: %v", len(got), got)
	}
}
