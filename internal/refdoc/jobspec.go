package refdoc

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/program"
)

// specField is what the reference says of one job-spec field beyond its
// type. def is the default when it is not simply what an omitted field
// parses to (a computed or conditional default); limits what Validate
// accepts.
type specField struct {
	def, limits, meaning string
}

// object is the row of a mapping whose fields follow it.
func object(meaning string) specField { return specField{def: "-", meaning: meaning} }

var (
	memoryText = "a byte count with an optional unit: Ki, Mi, Gi, Ti, Pi, Ei (powers of 1024) or k, M, G, T, P, E (powers of 1000), e.g. `512Mi`; at most " + fmt.Sprint(jobspec.MaxFieldLength) + " bytes"
	roleCount  = "1 to %d; or the mapping `{count: N, min: L, max: H}` (min defaults to 1, max to count) for `gctl job scale`"
)

// specFields describes every YAML field of jobspec.Spec. Limits quote the
// package's exported maxima so that a changed maximum changes the
// document; the unexported ones are checked by TestSpecLimits.
var specFields = map[string]specField{
	"name": {def: "required", limits: fmt.Sprintf("1 to %d ASCII letters, digits, `-` and `.`; starts and ends with a letter or digit; no `_`", jobspec.MaxNameLength),
		meaning: "the job's name, unique in the cluster; `gctl job start --name` overrides it"},
	"mode": {limits: "`sync` or `async`",
		meaning: "sync: every step applies the record-weighted mean gradient of `global_batch` records, whoever computed them (same seed, same data, same model); async: each trainer's push is applied at once"},
	"trainers":   {limits: fmt.Sprintf(roleCount, jobspec.MaxTrainers), meaning: "trainer processes; `--trainers` overrides the count"},
	"pservers":   {limits: fmt.Sprintf(roleCount, jobspec.MaxPservers), meaning: "parameter-server processes; the parameters are split evenly over them; `--pservers` overrides the count"},
	"passes":     {limits: fmt.Sprintf("1 to %d", jobspec.MaxPasses), meaning: "passes over the training data; `--passes` overrides it"},
	"batch_size": {limits: fmt.Sprintf("1 to %d", jobspec.MaxBatchSize), meaning: "records of one micro-batch: what one trainer computes at a time"},
	"global_batch": {def: "trainers × batch_size, fixed at submission (after the flag overrides)", limits: fmt.Sprintf("a multiple of batch_size, at most %d micro-batches", jobspec.MaxMicroBatches),
		meaning: "records of one sync step; fixed for the job's life, so scaling the trainers never changes what a step is"},
	"seed":       {limits: "0 means the default", meaning: "seeds the data order and the initial parameters"},
	"model":      object("the model to train"),
	"model.kind": {def: "required", limits: "`linear`, `softmax`, `mlp`, `recommender` or `program`", meaning: "a built-in model, or a user's program (docs/program-protocol.md)"},
	"model.dim":  {def: "none", limits: "recommender only; ≥ 1 unless every id field's table sets its own", meaning: "the dimension of each id field's embedding rows"},
	"model.tables": {def: "one table per id field of the records, with the defaults", limits: "recommender only (a program declares its tables: docs/program-protocol.md); keys are the records' id fields (`gctl data convert --format movielens`, or csv `--columns id:NAME=C`)",
		meaning: "per id field: `vocab` (ids below it; 0 or unset: any 64-bit id), `dim` (default model.dim), `optimizer` (sgd, adagrad or adam, applied lazily per row; default optimizer.kind, which must then be one of those), `init_scale` (the initialiser: a row's values start uniform in ±init_scale, drawn from the seed, the table and the id, the same whichever pserver makes it; finite, > 0; default 0.05)"},
	"model.interaction": {def: "`concat`", limits: "recommender only; `concat` or `dot` (dot: at least two id fields of the same dimension)",
		meaning: "concat: the MLP sees the pooled vectors side by side; dot (DLRM's): also the dot product of each pair of fields of the same dimension (after the dense features; `w0` gets a row per pair), a user × item term the MLP would otherwise approximate slowly"},
	"model.inputs": {def: "required (recommender: 0)", limits: fmt.Sprintf("1 to %d (recommender and program: 0 or more); must match the shards' dense features", jobspec.MaxLayerWidth),
		meaning: "features per record"},
	"model.outputs": {def: "`1` for linear; required otherwise", limits: fmt.Sprintf("linear: 1; softmax: 2 or more; at most %d", jobspec.MaxLayerWidth),
		meaning: "regression outputs (1) or classes; a classifier's labels must be below it"},
	"model.hidden": {limits: fmt.Sprintf("mlp and program only; at most %d layers of 1 to %d units; at most %d parameters in all (a program's declaration: at most %d, what one frame carries)", jobspec.MaxHiddenLayers, jobspec.MaxLayerWidth, jobspec.MaxParams, program.MaxParams),
		meaning: "widths of the hidden layers, input side first"},
	"model.entry": {def: "required for program", limits: fmt.Sprintf("program only; at most %d bytes", jobspec.MaxPathLength),
		meaning: "the program's command line, split at white space (no shell), run in the workspace"},
	"model.workspace": {def: "required for program, unless `gctl job start --package DIR` uploads one", limits: "program only; under an allowed path",
		meaning: "directory holding the program; relative to the spec file"},
	"model.timeout": {def: fmt.Sprintf("`%s`", program.DefaultTimeout), limits: fmt.Sprintf("program only; a Go duration in (0, %s]", jobspec.MaxProgramTimeout),
		meaning: "longest wait for one answer of the program"},
	"optimizer":               object("how the pservers apply gradients"),
	"optimizer.kind":          {limits: "`sgd`, `momentum`, `adagrad` or `adam`", meaning: "the pservers' update rule"},
	"optimizer.learning_rate": {limits: "finite, > 0", meaning: "step size"},
	"optimizer.momentum":      {limits: "[0, 1); a written 0 stays 0", meaning: "momentum only"},
	"optimizer.beta1":         {limits: "[0, 1); 0 means the default", meaning: "adam only"},
	"optimizer.beta2":         {limits: "[0, 1); 0 means the default", meaning: "adam only"},
	"optimizer.epsilon":       {limits: "finite, > 0", meaning: "adam and adagrad only"},
	"data":                    object("the record shards"),
	"data.train": {def: "required", limits: fmt.Sprintf("must match at least one shard; at most %d bytes; under an allowed path", jobspec.MaxPathLength),
		meaning: "glob of the training shards, relative to the spec file"},
	"data.test": {def: "none: no test loss", limits: "as data.train; the shards' features must match",
		meaning: "glob of the test shards, evaluated after every pass"},
	"data.chunks_per_task": {limits: fmt.Sprintf("1 to %d", jobspec.MaxChunksPerTask), meaning: "shard chunks in one task of the master's queue"},
	"data.shuffle":         {def: "`true`", limits: "", meaning: "each pass reads the tasks, and the records of each task, in an order seeded by seed and pass; false keeps the stored order"},
	"checkpoint":           object("the pservers' snapshots, from which a restarted pserver resumes"),
	"checkpoint.every": {limits: "a Go duration > 0 (`10s`) or a step count ≥ 1 (`200`)",
		meaning: "how often the pservers snapshot their parameters and optimizer state"},
	"checkpoint.keep": {limits: fmt.Sprintf("1 to %d", jobspec.MaxCheckpointKeep), meaning: "snapshots kept per pserver"},
	"checkpoint.dir": {def: "`<data-dir>/jobs/<name>/checkpoints` on the node", limits: "under an allowed path; storage every node of the job shares",
		meaning: "where checkpoints and the model go; required for a job placed on several nodes"},
	"resources":                object("what one process of each role asks of placement"),
	"resources.trainer":        object("one trainer"),
	"resources.trainer.cpu":    {def: "not stated", limits: "finite, ≥ 0", meaning: "CPUs one trainer asks of placement; it also sets the threads a built-in model computes each micro-batch on (rounded up; the gradient does not depend on it), the trainer's GOMAXPROCS (one more, for the network) and a model program's CPU quota (not stated: 1 CPU)"},
	"resources.trainer.memory": {def: "what the parameters need", limits: memoryText, meaning: "memory one trainer asks of placement; a stated request must hold the parameters. For model.kind program it is also the program's memory limit, and an agent that isolates programs refuses a program job without it"},
	"resources.trainer.gpu":    {def: "0", limits: "0 to 64", meaning: "GPUs of one node that one trainer gets to itself; its agent pins them with `CUDA_VISIBLE_DEVICES` for the trainer and its model program (0: it sees no GPU)"},
	"resources.pserver":        object("one pserver"),
	"resources.pserver.cpu":    {def: "not stated", limits: "finite, ≥ 0", meaning: "CPUs one pserver asks of placement; it also sets the pserver's GOMAXPROCS"},
	"resources.pserver.memory": {def: "what its share of the parameters and optimizer state needs", limits: memoryText, meaning: "memory one pserver asks of placement"},
	"resources.pserver.gpu":    {def: "0", limits: "0 to 64", meaning: "GPUs of one node that one pserver gets to itself, pinned with `CUDA_VISIBLE_DEVICES` for it and its model program"},
	"restarts":                 object("each role's crash budget"),
	"restarts.limit":           {limits: "1 to 1000", meaning: "crashes of one role within `window` that the job survives; one more fails it"},
	"restarts.window":          {limits: "a Go duration in (0, 24h]", meaning: "the crash budget's window"},
	"restarts.hung_after":      {limits: "a Go duration in (0, 1h]", meaning: "sync: how long a live worker may make no progress before it is killed and restarted (counted as a crash)"},
	"stragglers":               object("sync: when a slow trainer's micro-batch is handed to another"),
	"stragglers.factor": {def: fmt.Sprintf("`%d`", jobspec.DefaultStragglerFactor), limits: "2 to 100; 0 means the default",
		meaning: "sync: a micro-batch not reported within factor × the recent mean micro-batch time is handed to another trainer too"},
	"stragglers.min_wait": {def: fmt.Sprintf("`%s`", jobspec.DefaultStragglerWait), limits: "a Go duration in (0, 1h]", meaning: "sync: the least time before a micro-batch is handed out again"},
	"init_from":           object("start from a saved model instead of the seed's initialisation (warm start, fine-tuning; README \"Warm start, resume, export\")"),
	"init_from.job": {def: "none", limits: "a job name; its model must be readable by this agent (shared storage for a multi-node job)",
		meaning: "start from this other job's model"},
	"init_from.pass": {def: "the job's newest model", limits: "init_from.job only; a pass it has ended (from 0)", meaning: "which pass of that job's model"},
	"init_from.dir": {def: "none", limits: "a pass directory (`model_dir/pass-NNNNN`) or a `gctl job model --format raw` export; under an allowed path; not with init_from.job",
		meaning: "start from the model in this directory, relative to the spec file"},
	"init_from.only":            {def: "all parameters and embedding tables", limits: "parameter or embedding table names of the model, each once", meaning: "load only these; the others start from the seed"},
	"init_from.freeze":          {def: "none", limits: "parameter names of the model, each once; not embedding tables", meaning: "the pservers never update these (their gradients are dropped)"},
	"init_from.optimizer_state": {def: "false", limits: "the model must keep the state of this job's optimizer.kind (pass models written since gtrain keeps it; not exports)", meaning: "also load the optimizer's state of the loaded parameters (momentum, adagrad sums, adam moments and step count): the same optimizer and data order then train what the model's own job trained after it, bit for bit"},
	"env": {def: "none", limits: fmt.Sprintf("model.kind program only; at most %d variables; names of letters, digits and `_`; not `LD_*` (`LD_PRELOAD`, `LD_LIBRARY_PATH`, ...), `GCONV_PATH`, `GLIBC_TUNABLES`, `LOCPATH`, the thread counts (`OMP_NUM_THREADS`, ...), the Go runtime's (`GOMAXPROCS`, ...), `CUDA_VISIBLE_DEVICES` (placement pins a role's GPUs) nor `GTRAIN_*`/`GCTL_*`; a name ending in `PATH` takes absolute directories separated by `:`, each under an allowed path", jobspec.MaxEnvVars),
		meaning: "variables added to the environment of the job's model program (trainers, pservers, master)"},
	"priority": {def: "`0`", limits: fmt.Sprintf("an integer in [-%d, %d]", jobspec.MaxPriority, jobspec.MaxPriority),
		meaning: "placement order: among the jobs that wait, a higher priority is placed first (submit order within one priority)"},
}

// minimalSpec is the least a spec must say; parsing it shows the default
// of every field it leaves out.
const minimalSpec = "name: x\nmodel: {kind: linear, inputs: 1}\ndata: {train: t}\n"

// SpecTable renders the job spec's fields: YAML key, type, default,
// limits and meaning. It fails when a field of jobspec.Spec has no entry
// above or an entry no field.
func SpecTable() (string, error) {
	fields := Fields(reflect.TypeFor[jobspec.Spec](), "yaml")
	if err := coverage(fields, specFields); err != nil {
		return "", fmt.Errorf("jobspec.Spec: %w (specFields in internal/refdoc/jobspec.go)", err)
	}
	defaults, err := jobspec.Parse([]byte(minimalSpec))
	if err != nil {
		return "", err
	}
	v := reflect.ValueOf(*defaults)
	var b strings.Builder
	b.WriteString("| key | type | default | accepted | meaning |\n|---|---|---|---|---|\n")
	for _, f := range fields {
		d := specFields[f.Path]
		def := d.def
		if def == "" {
			def = defaultOf(v.FieldByIndex(f.Index))
		}
		typ := strings.TrimSuffix(f.Type, " or null") // YAML: a pointer only tells omitted from written
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", f.Path, typ, def, cell(d.limits), cell(d.meaning))
	}
	return b.String(), nil
}

func defaultOf(v reflect.Value) string {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "none"
		}
		v = v.Elem()
	}
	if v.IsZero() || (v.Kind() == reflect.Slice && v.Len() == 0) {
		return "none"
	}
	return fmt.Sprintf("`%v`", v.Interface())
}
