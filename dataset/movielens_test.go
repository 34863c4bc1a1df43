package dataset

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// writeMovieLens writes a MovieLens fixture into a new directory.
func writeMovieLens(t *testing.T, ratings, users, movies string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{MovieLensRatings: ratings, MovieLensUsers: users, MovieLensMovies: movies} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Fixture in ml-1m's layout; movie 20's title is Latin-1 (0xe9 is é),
// not UTF-8, and users.dat has CRLF line ends.
const (
	mlUsers   = "1::F::1::10::48067\r\n2::M::56::16::70072-1234\r\n"
	mlMovies  = "10::Toy Story (1995)::Animation|Children's|Comedy\n20::Caf\xe9 au lait (1993)::Comedy\n"
	mlRatings = "2::20::5::978300760\n1::10::3::978302109\n\n1::20::4.5::978301968\n"
)

func TestConvertMovieLens(t *testing.T) {
	dir := writeMovieLens(t, mlRatings, mlUsers, mlMovies)
	prefix := filepath.Join(t.TempDir(), "ml")
	res, err := Convert(ConvertOptions{Format: FormatMovieLens, Input: dir, OutPrefix: prefix, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Features != 0 || res.TrainRecords != 3 || !reflect.DeepEqual(res.IDFields, MovieLensFields) {
		t.Fatalf("result %+v: want 3 records, 0 features, the MovieLens id fields", res)
	}
	got, err := ReadAll(res.TrainFiles)
	if err != nil {
		t.Fatal(err)
	}
	f, m := HashID("gender", "F"), HashID("gender", "M")
	comedy := HashID("genres", "Comedy")
	toy := []uint64{HashID("genres", "Animation"), HashID("genres", "Children's"), comedy}
	want := []Example{
		{Features: []float32{}, Label: 5, IDs: [][]uint64{{2}, {20}, {m}, {56}, {16}, {HashID("zip", "70072-1234")}, {comedy}}},
		{Features: []float32{}, Label: 3, IDs: [][]uint64{{1}, {10}, {f}, {1}, {10}, {HashID("zip", "48067")}, toy}},
		{Features: []float32{}, Label: 4.5, IDs: [][]uint64{{1}, {20}, {f}, {1}, {10}, {HashID("zip", "48067")}, {comedy}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records\n%+v\nwant (ratings.dat's order)\n%+v", got, want)
	}
	// 0x8ef8d3ece33f0206 is FNV-1a 64 of "genres:Comedy", computed apart.
	if f == m || HashID("genres", "Comedy") != 0x8ef8d3ece33f0206 {
		t.Errorf("HashID(genres, Comedy) = %#x: the documented FNV-1a of \"genres:Comedy\" changed", HashID("genres", "Comedy"))
	}
}
