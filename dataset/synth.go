package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/gtrain/gtrain/internal/atomicfile"
)

// SynthOptions sizes a generated MovieLens-shaped data set (SynthMovieLens).
type SynthOptions struct {
	Dir           string  // written: ratings.dat, users.dat, movies.dat, planted.json, optimum.json
	Users, Movies int     // ids 1..Users and 1..Movies
	Ratings       int     // distinct (user, movie) pairs, at most half of Users × Movies
	Dim           int     // planted factor dimension
	Noise         float64 // standard deviation of the Gaussian noise on each rating
	Seed          uint64
	TestFraction  float64 // the split optimum.json's rmse_test is computed for ...
	SplitSeed     uint64  // ... as `gctl data convert --test-fraction X --seed S` cuts it
}

// Planted is the model the ratings are drawn from (planted.json): user u's
// rating of movie m is Mean + UserBias[u-1] + MovieBias[m-1] +
// UserFactors[u-1]·MovieFactors[m-1], plus noise.
type Planted struct {
	Mean         float64     `json:"mean"`
	UserBias     []float64   `json:"user_bias"`
	MovieBias    []float64   `json:"movie_bias"`
	UserFactors  [][]float64 `json:"user_factors"`
	MovieFactors [][]float64 `json:"movie_factors"`
}

// Predict is the planted (noise-free) rating of movie by user.
func (p Planted) Predict(user, movie uint64) float64 {
	u, m := user-1, movie-1
	r := p.Mean + p.UserBias[u] + p.MovieBias[m]
	for k, x := range p.UserFactors[u] {
		r += x * p.MovieFactors[m][k]
	}
	return r
}

// Optimum is optimum.json: the error of the planted model itself on the
// ratings as written (what no model can beat but by chance), over all
// ratings and over the test part of the given split.
type Optimum struct {
	Users        int     `json:"users"`
	Movies       int     `json:"movies"`
	Ratings      int     `json:"ratings"`
	Dim          int     `json:"dim"`
	Noise        float64 `json:"noise"`
	Seed         uint64  `json:"seed"`
	RMSEAll      float64 `json:"rmse_all"`
	TestFraction float64 `json:"test_fraction"`
	SplitSeed    uint64  `json:"split_seed"`
	TestRecords  int     `json:"test_records"`
	RMSETest     float64 `json:"rmse_test"`
	// RMSEConstant is the error of the best constant (the mean rating) over
	// all ratings: a model must get well below it to have learnt anything.
	RMSEConstant float64 `json:"rmse_constant"`
}

// SynthMovieLens writes ml-1m-shaped files generated from planted user and
// movie factors, and the planted model and its error beside them. The output
// depends only on the options. Ratings are continuous (3 decimals, not
// clipped to 1..5, so that the floor is exactly the noise); the side fields
// (gender, age, occupation, zip, genres) are drawn at random and carry no
// signal.
func SynthMovieLens(o SynthOptions) (*Optimum, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x5eed5eed5eed5eed))
	p := plantModel(rng, o)
	users, movies := synthUsers(rng, o.Users), synthMovies(rng, o.Movies)
	ratings, truth := synthRatings(rng, o, p)
	opt := optimum(o, ratings, truth)
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("dataset: creating %s: %w", o.Dir, err)
	}
	planted, _ := json.Marshal(p)
	optJSON, _ := json.MarshalIndent(opt, "", "  ")
	for _, f := range []struct {
		name string
		data []byte
	}{{MovieLensUsers, users}, {MovieLensMovies, movies}, {MovieLensRatings, ratings}, {"planted.json", planted}, {"optimum.json", append(optJSON, '\n')}} {
		if err := atomicfile.WriteFile(filepath.Join(o.Dir, f.name), f.data, 0o644); err != nil {
			return nil, fmt.Errorf("dataset: writing %s: %w", f.name, err)
		}
	}
	return &opt, nil
}

func (o SynthOptions) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadOptions, fmt.Sprintf(format, args...))
	}
	switch {
	case o.Dir == "":
		return bad("no output directory given")
	case o.Users < 1 || o.Movies < 1 || o.Dim < 1 || o.Ratings < 1:
		return bad("users %d, movies %d, ratings %d and dim %d must each be at least 1", o.Users, o.Movies, o.Ratings, o.Dim)
	case o.Users > 1<<24 || o.Movies > 1<<24 || o.Dim > 1024:
		return bad("users %d, movies %d (at most %d each) or dim %d (at most 1024) too large", o.Users, o.Movies, 1<<24, o.Dim)
	case float64(o.Ratings) > float64(o.Users)*float64(o.Movies)/2:
		return bad("%d ratings of %d users × %d movies: at most half the pairs (%d) can be rated", o.Ratings, o.Users, o.Movies, o.Users*o.Movies/2)
	case !(o.Noise >= 0) || math.IsInf(o.Noise, 0):
		return bad("noise %v must be a finite number >= 0", o.Noise)
	case !(o.TestFraction >= 0 && o.TestFraction < 1):
		return bad("test fraction %v, must be in [0, 1)", o.TestFraction)
	}
	return nil
}

// plantModel draws biases N(0, 0.3²) and factors N(0, dim^-1/2), so that the
// factor term has variance about 1 whatever the dimension.
func plantModel(rng *rand.Rand, o SynthOptions) Planted {
	sd := math.Pow(float64(o.Dim), -0.25)
	vectors := func(n int) [][]float64 {
		out := make([][]float64, n)
		for i := range out {
			out[i] = make([]float64, o.Dim)
			for k := range out[i] {
				out[i][k] = rng.NormFloat64() * sd
			}
		}
		return out
	}
	biases := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = rng.NormFloat64() * 0.3
		}
		return out
	}
	return Planted{Mean: 3.5, UserBias: biases(o.Users), MovieBias: biases(o.Movies),
		UserFactors: vectors(o.Users), MovieFactors: vectors(o.Movies)}
}

// ml-1m's age codes and genre names.
var (
	synthAges   = []int{1, 18, 25, 35, 45, 50, 56}
	synthGenres = []string{"Action", "Adventure", "Animation", "Children's", "Comedy", "Crime", "Documentary", "Drama",
		"Fantasy", "Film-Noir", "Horror", "Musical", "Mystery", "Romance", "Sci-Fi", "Thriller", "War", "Western"}
)

func synthUsers(rng *rand.Rand, n int) []byte {
	var b bytes.Buffer
	for u := 1; u <= n; u++ {
		gender := "F"
		if rng.IntN(2) == 1 {
			gender = "M"
		}
		fmt.Fprintf(&b, "%d::%s::%d::%d::%05d\n", u, gender, synthAges[rng.IntN(len(synthAges))], rng.IntN(21), 10000+97*rng.IntN(200))
	}
	return b.Bytes()
}

// synthMovies writes a title with a Latin-1 byte (é is 0xe9) every 7th
// movie, as ml-1m has.
func synthMovies(rng *rand.Rand, n int) []byte {
	var b bytes.Buffer
	for m := 1; m <= n; m++ {
		title := fmt.Sprintf("Movie %d (%d)", m, 1920+rng.IntN(81))
		if m%7 == 0 {
			title = fmt.Sprintf("Caf\xe9 %d (%d)", m, 1920+rng.IntN(81))
		}
		perm := rng.Perm(len(synthGenres))[:1+rng.IntN(3)]
		slices.Sort(perm)
		names := make([][]byte, len(perm))
		for i, g := range perm {
			names[i] = []byte(synthGenres[g])
		}
		fmt.Fprintf(&b, "%d::%s::%s\n", m, title, bytes.Join(names, []byte("|")))
	}
	return b.Bytes()
}

type synthPair struct{ user, movie uint64 }

// synthRatings draws distinct (user, movie) pairs uniformly and writes them
// grouped by user, as ml-1m is, with rising timestamps; it returns the file
// and each line's planted rating.
func synthRatings(rng *rand.Rand, o SynthOptions, p Planted) ([]byte, []float64) {
	seen := make(map[synthPair]bool, o.Ratings)
	pairs := make([]synthPair, 0, o.Ratings)
	for len(pairs) < o.Ratings {
		q := synthPair{uint64(1 + rng.IntN(o.Users)), uint64(1 + rng.IntN(o.Movies))}
		if !seen[q] {
			seen[q] = true
			pairs = append(pairs, q)
		}
	}
	slices.SortStableFunc(pairs, func(a, b synthPair) int { return int(a.user) - int(b.user) })
	var b bytes.Buffer
	truth := make([]float64, len(pairs))
	for i, q := range pairs {
		truth[i] = p.Predict(q.user, q.movie)
		r := truth[i] + rng.NormFloat64()*o.Noise
		fmt.Fprintf(&b, "%d::%d::%s::%d\n", q.user, q.movie, strconv.FormatFloat(r, 'f', 3, 64), 956703932+i)
	}
	return b.Bytes(), truth
}

// optimum measures the planted model against the ratings as convert reads
// them (float32), over all of them and over the test part that convert's
// split with o.TestFraction and o.SplitSeed cuts.
func optimum(o SynthOptions, ratings []byte, truth []float64) Optimum {
	lines := bytes.Split(bytes.TrimSuffix(ratings, []byte("\n")), []byte("\n"))
	y := make([]float64, len(lines))
	for i, line := range lines {
		r, _ := parseNumber(bytes.Split(line, []byte("::"))[2], "Rating")
		y[i] = float64(r)
	}
	nTest := testCount(o.TestFraction, len(y))
	isTest := testMask(len(y), nTest, o.SplitSeed)
	var all, test, sum, sumSq float64
	for i := range y {
		d := y[i] - truth[i]
		all += d * d
		if isTest[i] {
			test += d * d
		}
		sum, sumSq = sum+y[i], sumSq+y[i]*y[i]
	}
	n := float64(len(y))
	opt := Optimum{Users: o.Users, Movies: o.Movies, Ratings: len(y), Dim: o.Dim, Noise: o.Noise, Seed: o.Seed, RMSEAll: math.Sqrt(all / n), TestFraction: o.TestFraction,
		SplitSeed: o.SplitSeed, TestRecords: nTest, RMSEConstant: math.Sqrt(max(0, sumSq/n-(sum/n)*(sum/n)))}
	if nTest > 0 {
		opt.RMSETest = math.Sqrt(test / float64(nTest))
	}
	return opt
}
