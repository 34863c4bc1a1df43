package main

import (
	"bytes"
	"compress/gzip"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataConvertTestPartWithStats converts a training set with
// --normalize, then a separate gzip-compressed test set with its --stats;
// statistics of the wrong width and a damaged .gz are rejected (exit 2).
func TestDataConvertTestPartWithStats(t *testing.T) {
	dir := t.TempDir()
	input := writeFile(t, filepath.Join(dir, "train.data"), "1 2 0\n3 4 1\n5 6 0\n")
	prefix := filepath.Join(dir, "out", "toy")
	a, stdout, stderr := newTestApp(t)
	r := runGctl(t, a, stdout, stderr, "data", "convert", "--format", "whitespace", "--input", input, "--out", prefix, "--shards", "1", "--normalize")
	wantRun(t, r, exitOK, []string{prefix + "-stats.json"}, nil)

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("7 8 1\n9 10 0\n"))
	_ = zw.Close()
	testInput := writeFile(t, filepath.Join(dir, "test.data.gz"), gz.String())
	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "data", "convert", "--format", "whitespace", "--input", testInput, "--out", prefix, "--shards", "1",
		"--part", "test", "--stats", prefix+"-stats.json")
	wantRun(t, r, exitOK, []string{"test: 2 records, 1 shards", prefix + "-test-00000-of-00001", "normalized with the statistics of " + prefix + "-stats.json"}, nil)
	if strings.Contains(r.stdout, "train:") {
		t.Errorf("a test part reported a train part: %s", r.stdout)
	}

	wide := writeFile(t, filepath.Join(dir, "wide.data"), "1 2 3 0\n")
	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "data", "convert", "--format", "whitespace", "--input", wide, "--out", prefix+"w", "--shards", "1",
		"--part", "test", "--stats", prefix+"-stats.json")
	wantRun(t, r, exitRejected, nil, []string{"2 features, the input records have 3"})

	cut := writeFile(t, filepath.Join(dir, "cut.data.gz"), gz.String()[:gz.Len()-5])
	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "data", "convert", "--format", "whitespace", "--input", cut, "--out", prefix+"c", "--shards", "1")
	wantRun(t, r, exitRejected, nil, []string{"cut.data.gz", "gzip"})
}
