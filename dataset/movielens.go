package dataset

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
)

// FormatMovieLens reads a directory holding MovieLens ml-1m's ratings.dat,
// users.dat and movies.dat.
const FormatMovieLens = "movielens"

// MovieLens file names inside the input directory.
const (
	MovieLensRatings = "ratings.dat"
	MovieLensUsers   = "users.dat"
	MovieLensMovies  = "movies.dat"
)

// MovieLensFields are the id fields of a converted MovieLens record, in this
// order: user and movie are the numeric ids as they are, age and occupation
// ml-1m's numeric codes as they are; gender, zip and each of the genres are
// HashID(field, text).
var MovieLensFields = []IDField{
	{Name: "user"}, {Name: "movie"}, {Name: "gender"}, {Name: "age"},
	{Name: "occupation"}, {Name: "zip"}, {Name: "genres"},
}

// movieLensUser holds a user's ids of the fields gender, age, occupation, zip.
type movieLensUser [4][]uint64

// readMovieLens turns every line of dir/ratings.dat into a record in the
// file's order: label the rating (a number: ml-1m's are whole, a generated
// set's may not be), no dense features, ids of MovieLensFields. The files are
// read as bytes (ml-1m is Latin-1); any line that is not of the layout is
// ErrBadLine naming the file and line.
func readMovieLens(dir string) ([]Example, error) {
	users, err := readMovieLensUsers(filepath.Join(dir, MovieLensUsers))
	if err != nil {
		return nil, err
	}
	genres, err := readMovieLensMovies(filepath.Join(dir, MovieLensMovies))
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, MovieLensRatings)
	var out []Example
	err = eachLine(path, func(lineNo int, line []byte) error {
		f, err := splitMovieLens(line, 4, "UserID::MovieID::Rating::Timestamp")
		if err == nil {
			var e Example
			e, err = movieLensRating(f, users, genres)
			out = append(out, e)
		}
		if err != nil {
			return fmt.Errorf("%w: %s:%d: %v", ErrBadLine, path, lineNo, err)
		}
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%w: %s has no rating", ErrNoRecords, path)
	}
	return out, err
}

// movieLensRating makes the record of one ratings.dat line.
func movieLensRating(f [][]byte, users map[uint64]movieLensUser, genres map[uint64][]uint64) (Example, error) {
	user, err := parseID(f[0], "UserID")
	if err != nil {
		return Example{}, err
	}
	movie, err := parseID(f[1], "MovieID")
	if err != nil {
		return Example{}, err
	}
	rating, err := parseNumber(f[2], "Rating")
	if err != nil {
		return Example{}, err
	}
	if _, err := strconv.ParseInt(string(f[3]), 10, 64); err != nil {
		return Example{}, fmt.Errorf("Timestamp %.40q is not a whole number", f[3])
	}
	u, ok := users[user]
	if !ok {
		return Example{}, fmt.Errorf("user %d is not in %s", user, MovieLensUsers)
	}
	g, ok := genres[movie]
	if !ok {
		return Example{}, fmt.Errorf("movie %d is not in %s", movie, MovieLensMovies)
	}
	// The per-user and per-movie lists are shared by their records: records
	// are read, never written to, once converted.
	ids := [][]uint64{{user}, {movie}, u[0], u[1], u[2], u[3], g}
	return Example{Features: []float32{}, Label: rating, IDs: ids}, nil
}

func readMovieLensUsers(path string) (map[uint64]movieLensUser, error) {
	users := map[uint64]movieLensUser{}
	firstLine := map[uint64]int{}
	err := eachLine(path, func(lineNo int, line []byte) error {
		bad := func(err error) error { return fmt.Errorf("%w: %s:%d: %v", ErrBadLine, path, lineNo, err) }
		f, err := splitMovieLens(line, 5, "UserID::Gender::Age::Occupation::Zip-code")
		if err != nil {
			return bad(err)
		}
		id, err := newKey(f[0], "UserID", firstLine)
		if err != nil {
			return bad(err)
		}
		age, err := parseID(f[2], "Age")
		if err != nil {
			return bad(err)
		}
		occupation, err := parseID(f[3], "Occupation")
		if err != nil {
			return bad(err)
		}
		if len(f[1]) == 0 || len(f[4]) == 0 {
			return bad(fmt.Errorf("Gender or Zip-code is empty"))
		}
		firstLine[id] = lineNo
		users[id] = movieLensUser{{HashID("gender", f[1])}, {age}, {occupation}, {HashID("zip", f[4])}}
		return nil
	})
	return users, err
}

// readMovieLensMovies returns each movie's genre ids. Titles are not used
// (and may be any bytes).
func readMovieLensMovies(path string) (map[uint64][]uint64, error) {
	genres := map[uint64][]uint64{}
	firstLine := map[uint64]int{}
	err := eachLine(path, func(lineNo int, line []byte) error {
		bad := func(err error) error { return fmt.Errorf("%w: %s:%d: %v", ErrBadLine, path, lineNo, err) }
		f, err := splitMovieLens(line, 3, "MovieID::Title::Genres")
		if err != nil {
			return bad(err)
		}
		id, err := newKey(f[0], "MovieID", firstLine)
		if err != nil {
			return bad(err)
		}
		var g []uint64
		for _, name := range bytes.Split(f[2], []byte("|")) {
			if len(name) > 0 {
				g = append(g, HashID("genres", name))
			}
		}
		if len(g) > MaxIDsPerField {
			return bad(fmt.Errorf("%d genres, at most %d", len(g), MaxIDsPerField))
		}
		firstLine[id], genres[id] = lineNo, g
		return nil
	})
	return genres, err
}

// newKey parses the id a users.dat or movies.dat line is about, refusing
// one listed before (firstLine: the line each id was first listed on).
func newKey(b []byte, what string, firstLine map[uint64]int) (uint64, error) {
	id, err := parseID(b, what)
	if err != nil {
		return 0, err
	}
	if first, dup := firstLine[id]; dup {
		return 0, fmt.Errorf("%s %d is listed again (first on line %d)", what, id, first)
	}
	return id, nil
}

// splitMovieLens splits a line at "::" into exactly n fields.
func splitMovieLens(line []byte, n int, layout string) ([][]byte, error) {
	f := bytes.Split(line, []byte("::"))
	if len(f) != n {
		return nil, fmt.Errorf("%d %q-separated fields, want %d (%s)", len(f), "::", n, layout)
	}
	return f, nil
}
