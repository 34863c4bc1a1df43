package jobspec

import "testing"

func TestDataShuffleDefaultsToTrue(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{{"", true}, {"  shuffle: true\n", true}, {"  shuffle: false\n", false}} {
		doc := "name: j\nmodel: {kind: linear, inputs: 2}\ndata:\n  train: /d/train-*\n" + c.line
		s, err := Parse([]byte(doc))
		if err != nil {
			t.Fatalf("%q: %v", c.line, err)
		}
		if got := s.Data.ShuffleRecords(); got != c.want {
			t.Errorf("%q: ShuffleRecords() = %v, want %v", c.line, got, c.want)
		}
	}
}
