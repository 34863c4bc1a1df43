package main

import (
	"path/filepath"
	"testing"
)

// A MovieLens fixture in ml-1m's layout (movie 20's title is Latin-1).
const (
	mlUsers   = "1::F::1::10::48067\n2::M::56::16::70072\n"
	mlMovies  = "10::Toy Story (1995)::Animation|Children's|Comedy\n20::Caf\xe9 (1993)::Comedy\n"
	mlRatings = "2::20::5::978300760\n1::10::3::978302109\n1::20::4::978301968\n"
)

func writeMovieLensDir(t *testing.T, ratings, users, movies string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ratings.dat"), ratings)
	writeFile(t, filepath.Join(dir, "users.dat"), users)
	writeFile(t, filepath.Join(dir, "movies.dat"), movies)
	return dir
}

// TestDataConvertMovieLens converts the fixture, then each kind of bad
// input: exit 2 naming the file and line.
func TestDataConvertMovieLens(t *testing.T) {
	dir := writeMovieLensDir(t, mlRatings, mlUsers, mlMovies)
	a, stdout, stderr := newTestApp(t)
	r := runGctl(t, a, stdout, stderr, "data", "convert", "--format", "movielens", "--input", dir, "--out", filepath.Join(dir, "out", "ml"), "--shards", "1")
	wantRun(t, r, exitOK, []string{"train: 3 records, 0 features, 1 shards", "id fields: user, movie, gender, age, occupation, zip, genres"}, nil)

	for _, c := range []struct {
		name, ratings, users, movies, file, line, what string
	}{
		{"text user id", "2::20::5::1\nx7::10::3::2\n", mlUsers, mlMovies, "ratings.dat", ":2:", `UserID "x7"`},
		{"rating missing", "2::20::::1\n", mlUsers, mlMovies, "ratings.dat", ":1:", "Rating is missing"},
		{"rating not a number", "2::20::five::1\n", mlUsers, mlMovies, "ratings.dat", ":1:", `Rating "five" is not a finite number`},
		{"rating field missing", "2::20::5::1\n1::10::978302109\n", mlUsers, mlMovies, "ratings.dat", ":2:", "3 \"::\"-separated fields, want 4"},
		{"unknown user", "2::20::5::1\n9::10::3::2\n", mlUsers, mlMovies, "ratings.dat", ":2:", "user 9 is not in users.dat"},
		{"unknown movie", "2::30::5::1\n", mlUsers, mlMovies, "ratings.dat", ":1:", "movie 30 is not in movies.dat"},
		{"short users line", mlRatings, "1::F::1::10::48067\n2::M::56::16\n", mlMovies, "users.dat", ":2:", "want 5"},
		{"user twice", mlRatings, "1::F::1::10::48067\n1::M::56::16::70072\n", mlMovies, "users.dat", ":2:", "UserID 1 is listed again (first on line 1)"},
		{"text age", mlRatings, "1::F::old::10::48067\n", mlMovies, "users.dat", ":1:", `Age "old"`},
		{"long movies line", mlRatings, mlUsers, "10::Toy::Story::Comedy\n", "movies.dat", ":1:", "4 \"::\"-separated fields, want 3"},
		{"text movie id", mlRatings, mlUsers, "ten::Toy Story::Comedy\n", "movies.dat", ":1:", `MovieID "ten"`},
	} {
		dir := writeMovieLensDir(t, c.ratings, c.users, c.movies)
		a, stdout, stderr := newTestApp(t)
		r := runGctl(t, a, stdout, stderr, "data", "convert", "--format", "movielens", "--input", dir, "--out", filepath.Join(dir, "out", "ml"), "--shards", "1")
		t.Run(c.name, func(t *testing.T) {
			wantRun(t, r, exitRejected, nil, []string{filepath.Join(dir, c.file) + c.line, c.what})
		})
	}
}

// TestDataSynthMovieLens generates a small set, converts it and reads
// optimum.json back as -o json.
func TestDataSynthMovieLens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ml")
	a, stdout, stderr := newTestApp(t)
	r := runGctl(t, a, stdout, stderr, "data", "synth", "movielens", "--out", dir, "--users", "30", "--movies", "20", "--ratings", "200", "--noise", "0.2")
	wantRun(t, r, exitOK, []string{"wrote 200 ratings of 30 users and 20 movies", "planted optimum: RMSE 0.2"}, nil)
	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "data", "convert", "--format", "movielens", "--input", dir, "--out", filepath.Join(dir, "out", "ml"), "--shards", "2", "--test-fraction", "0.2")
	wantRun(t, r, exitOK, []string{"train: 160 records", "test: 40 records"}, nil)
	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "data", "synth", "movielens", "--out", dir, "--users", "3", "--movies", "2", "--ratings", "4")
	wantRun(t, r, exitRejected, nil, []string{"4 ratings of 3 users × 2 movies: at most half the pairs (3)"})
}

// TestDataConvertColumns converts csv with a header and categorical columns,
// then bad lines and specs: exit 2 naming the line and column.
func TestDataConvertColumns(t *testing.T) {
	dir := t.TempDir()
	input := writeFile(t, filepath.Join(dir, "r.csv"), "user,item,rating,age\n1,shoe,4,30\n2,hat|shoe,3,41\n")
	convert := func(input, columns string, extra ...string) testRun {
		a, stdout, stderr := newTestApp(t)
		args := append([]string{"data", "convert", "--format", "csv", "--input", input, "--out", filepath.Join(dir, "out", "r"),
			"--shards", "1", "--replace", "--columns", columns}, extra...)
		return runGctl(t, a, stdout, stderr, args...)
	}
	r := convert(input, "label=rating,id:user=1,hash:item=item,dense=4", "--header")
	wantRun(t, r, exitOK, []string{"train: 2 records, 1 features", "id fields: user, item"}, nil)

	text := writeFile(t, filepath.Join(dir, "text.csv"), "1,shoe,4,30\nu2,hat,3,41\n")
	r = convert(text, "label=3,id:user=1,hash:item=2,dense=4")
	wantRun(t, r, exitRejected, nil, []string{text + ":2:", `column 1 (id:user): "u2" is not a whole number`})

	short := writeFile(t, filepath.Join(dir, "short.csv"), "user,item,rating,age\n1,shoe,4,30\n2,hat,3\n")
	r = convert(short, "label=rating,id:user=1,hash:item=2,dense=age", "--header")
	wantRun(t, r, exitRejected, nil, []string{short + ":3:", "column 4 (age) and after are missing"})

	r = convert(input, "label=rating,id:user=1,dense=height", "--header")
	wantRun(t, r, exitRejected, nil, []string{`dense=height: "height" is not a column number (from 1) or a name of the header row`})

	a, stdout, stderr := newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "data", "convert", "--format", "idx", "--input", input, "--labels", input, "--out", filepath.Join(dir, "x"),
		"--shards", "1", "--columns", "label=1")
	wantRun(t, r, exitRejected, nil, []string{"--columns and --header are for the text formats"})
}
