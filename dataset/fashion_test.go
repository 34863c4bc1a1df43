package dataset

import (
	"path/filepath"
	"testing"
)

// fashionDir holds Debian's dataset-fashion-mnist (gzip IDX files); CI
// installs the package, so a missing file fails the test.
const fashionDir = "/usr/share/datasets/fashion-mnist"

// fashionSubset reads the real t10k files from their .gz (the path the
// conversion takes) and writes the first n images and labels as new gzip IDX
// files: real pixels, at a size a test under -race converts in a second.
func fashionSubset(t *testing.T, dir string, n int) (images, labels string, raw []byte) {
	t.Helper()
	realImages := filepath.Join(fashionDir, "t10k-images-idx3-ubyte.gz")
	realLabels := filepath.Join(fashionDir, "t10k-labels-idx1-ubyte.gz")
	imgData, err := readInputFile(realImages)
	if err != nil {
		t.Fatalf("%v: install Debian's dataset-fashion-mnist", err)
	}
	lblData, err := readInputFile(realLabels)
	if err != nil {
		t.Fatal(err)
	}
	dims, pixels, err := parseIDX(realImages, imgData)
	if err != nil || len(dims) != 3 || dims[0] != 10000 || dims[1] != 28 || dims[2] != 28 {
		t.Fatalf("%s: dims %v, %v: want 10000x28x28", realImages, dims, err)
	}
	_, lbls, err := parseIDX(realLabels, lblData)
	if err != nil {
		t.Fatal(err)
	}
	raw = pixels[:n*784]
	images = writeFile(t, dir, "images.gz", gzipped(t, idxFile([]uint32{uint32(n), 28, 28}, raw)))
	labels = writeFile(t, dir, "labels.gz", gzipped(t, idxFile([]uint32{uint32(n)}, lbls[:n])))
	return images, labels, raw
}

// TestConvertFashionMNISTTestSet converts real Fashion-MNIST records from
// .gz files: first as a training set with Normalize, then as a separate test
// set with those statistics, the way the Fashion-MNIST example prepares the
// official train and t10k files.
func TestConvertFashionMNISTTestSet(t *testing.T) {
	dir := t.TempDir()
	images, labels, raw := fashionSubset(t, dir, 2000)
	train, err := Convert(ConvertOptions{Format: FormatIDX, Input: images, Labels: labels, OutPrefix: filepath.Join(dir, "fashion"),
		Shards: 2, TestFraction: 0.1, Normalize: true, ChunkRecords: 64})
	if err != nil {
		t.Fatal(err)
	}
	if train.TrainRecords != 1800 || train.TestRecords != 200 || train.Features != 784 || train.Classes != 10 {
		t.Fatalf("result %+v, want 1800 train + 200 test records of 784 features, 10 classes", train)
	}
	test, err := Convert(ConvertOptions{Format: FormatIDX, Input: images, Labels: labels, OutPrefix: filepath.Join(dir, "t10k"),
		Shards: 1, Part: PartTest, Stats: train.StatsFile, ChunkRecords: 64})
	if err != nil {
		t.Fatal(err)
	}
	got := readFiles(t, test.TestFiles)
	if len(got) != 2000 {
		t.Fatalf("test set: %d records, want 2000", len(got))
	}
	stats, err := ReadStats(train.StatsFile)
	if err != nil {
		t.Fatal(err)
	}
	classes := map[float32]bool{}
	for _, e := range got {
		classes[e.Label] = true
	}
	if len(classes) != 10 {
		t.Errorf("%d classes among the records, want all 10", len(classes))
	}
	// The first t10k image is an ankle boot (class 9); check a pixel against
	// the raw byte, scaled to [0,1] and then standardised.
	if got[0].Label != 9 {
		t.Errorf("first test record: label %v, want 9 (ankle boot)", got[0].Label)
	}
	const pixel = 14*28 + 14 // the middle of the image
	want := (float64(raw[pixel])/255 - stats.Mean[pixel]) / stats.Std[pixel]
	if d := float64(got[0].Features[pixel]) - want; d > 1e-5 || d < -1e-5 {
		t.Errorf("first record, pixel %d: %v, want %v", pixel, got[0].Features[pixel], want)
	}
}
