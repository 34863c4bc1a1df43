package jobspec

import "testing"

func TestRecommenderValidation(t *testing.T) {
	base := "name: j\ndata: {train: /d/train-*}\noptimizer: {kind: adagrad, learning_rate: 0.1}\n"
	model := "model: {kind: recommender, dim: 8, inputs: 0, hidden: [16], outputs: 1"
	checkFieldCases(t, base, []fieldCase{
		{model + "}\n", ""},
		{model + ", tables: {user: {vocab: 1000, dim: 4, optimizer: adam}}}\n", ""},
		{"model: {kind: recommender, inputs: 0, outputs: 1}\n", "model.dim"},
		{"model: {kind: recommender, dim: -1, inputs: 0, outputs: 1}\n", "model.dim"},
		{model + ", tables: {user: {dim: -2}}}\n", "model.tables.user.dim"},
		{model + ", tables: {user: {optimizer: momentum}}}\n", "model.tables.user.optimizer"},
		{model + ", tables: {user: {init_scale: 0.01}}}\n", ""},
		{model + ", tables: {user: {init_scale: -0.1}}}\n", "model.tables.user.init_scale"},
		{model + ", tables: {user: {init_scale: .nan}}}\n", "model.tables.user.init_scale"},
		{model + ", entry: x.py}\n", "model.entry"},
		// Rows are re-sharded with the dense parameters (pserver.RecutRows).
		{model + "}\npservers: {count: 2, min: 1, max: 3}\n", ""},
		{model + ", interaction: dot}\n", ""},
		{model + ", interaction: concat}\n", ""},
		{model + ", interaction: cross}\n", "model.interaction"},
		{"model: {kind: mlp, inputs: 4, outputs: 2, hidden: [8], interaction: dot}\n", "model.interaction"},
	})
	// momentum for the dense parameters needs each table's own optimizer.
	checkFieldCases(t, "name: j\ndata: {train: /d/train-*}\noptimizer: {kind: momentum, learning_rate: 0.1}\n", []fieldCase{
		{model + ", tables: {user: {optimizer: momentum}}}\n", "model.tables.user.optimizer"},
		{model + ", tables: {user: {}}}\n", "optimizer.kind"},
	})
}

// The id fields come from the shards: pinned in model.fields, the same in
// every shard, and a table naming no field is refused.
func TestRecommenderFieldsFromTheShards(t *testing.T) {
	s := mustParse(t, "name: j\ndata: {train: /d/train-*}\noptimizer: {kind: adagrad, learning_rate: 0.1}\n"+
		"model: {kind: recommender, dim: 8, inputs: 0, outputs: 1, tables: {movie: {dim: 4}}}\n")
	if err := s.checkIDFields("data.train", "/d/train-0", []string{"user", "movie"}); err != nil {
		t.Fatal(err)
	}
	if got := s.Model.RecSpec().Tables(); len(got) != 2 || got[0].Dim != 8 || got[1].Dim != 4 {
		t.Errorf("tables %+v, want user of 8 and movie of 4", got)
	}
	// dot needs two fields of one dimension: known once the fields are.
	s.Model.Interaction = "dot"
	wantFieldError(t, s.checkIDFields("data.train", "/d/train-0", []string{"user", "movie"}), "model.interaction", "same dimension")
	s.Model.Interaction = ""
	wantFieldError(t, s.checkIDFields("data.train", "/d/train-1", []string{"user"}), "data.train", "have the id fields user, others have user, movie")
	wantFieldError(t, s.checkIDFields("data.test", "/d/test-0", nil), "data.test", "no id fields")
	other := mustParse(t, "name: j\ndata: {train: /d/train-*}\noptimizer: {kind: adagrad, learning_rate: 0.1}\n"+
		"model: {kind: recommender, dim: 8, inputs: 0, outputs: 1, tables: {genre: {dim: 4}}}\n")
	wantFieldError(t, other.checkIDFields("data.train", "/d/train-0", []string{"user", "movie"}), "model.tables.genre")
}

func mustParse(t *testing.T, yaml string) *Spec {
	t.Helper()
	s, err := Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRecommenderVocabAgainstTheShards(t *testing.T) {
	s := mustParse(t, "name: j\ndata: {train: /d/train-*}\noptimizer: {kind: adagrad, learning_rate: 0.1}\n"+
		"model: {kind: recommender, dim: 8, inputs: 0, outputs: 1, tables: {user: {vocab: 100}}}\n")
	ok := ShardInfo{IDFields: []string{"user", "movie"}, IDMax: []uint64{99, 1 << 40}}
	if err := s.checkVocab("/d/train-0", ok); err != nil {
		t.Fatal(err)
	}
	over := ShardInfo{IDFields: []string{"user", "movie"}, IDMax: []uint64{100, 7}}
	wantFieldError(t, s.checkVocab("/d/train-1", over), "model.tables.user.vocab", "/d/train-1", "up to 100")
}
