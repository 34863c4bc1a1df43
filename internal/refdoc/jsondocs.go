package refdoc

import (
	"reflect"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/bench"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/model"
)

// Document is a JSON document of the contract: the section of the
// reference its table goes into, its Go type and what each key means.
type Document struct {
	Section  string
	Type     reflect.Type
	Meanings map[string]string
}

// Documents are the JSON documents whose tables the reference holds.
var Documents = []Document{
	{"status-json", reflect.TypeFor[api.JobStatus](), statusMeanings},
	{"job-list-json", reflect.TypeFor[api.JobRow](), jobRowMeanings},
	{"job-workers-json", reflect.TypeFor[api.WorkerRow](), workerRowMeanings},
	{"node-list-json", reflect.TypeFor[api.NodeRow](), nodeRowMeanings},
	{"quota-json", reflect.TypeFor[api.QuotaRow](), quotaMeanings},
	{"events-json", reflect.TypeFor[api.Event](), eventMeanings},
	{"manifest-json", reflect.TypeFor[model.Manifest](), manifestMeanings},
	{"shard-meta-json", reflect.TypeFor[dataset.ShardMeta](), shardMetaMeanings},
	{"stats-json", reflect.TypeFor[dataset.Stats](), statsMeanings},
	{"bench-results-json", reflect.TypeFor[bench.Result](), benchResultMeanings},
}

const budgetUsed = "how many of `restarts` count against the crash budget now (crashes within its window; exits after losing etcd or the master do not count)"

var statusMeanings = map[string]string{
	"name":                       "the job's name",
	"state":                      "`PENDING`, `RUNNING`, `SUCCEEDED`, `FAILED` or `STOPPED` (see [Job states](#job-states))",
	"reason":                     "why the job is PENDING (what is short, where), FAILED or STOPPED",
	"mode":                       "`sync` or `async`",
	"pass":                       "passes finished so far, which is also the pass running now, numbered from 0; equals `passes` once every pass finished",
	"passes":                     "passes the job runs",
	"step":                       "global steps applied so far",
	"tasks":                      "the master's queue in the current pass",
	"tasks.todo":                 "tasks not handed out yet",
	"tasks.pending":              "tasks handed out, not done yet",
	"tasks.done":                 "tasks done",
	"tasks.failed":               "tasks given up after too many failures",
	"samples_applied":            "per finished pass, training records whose gradients are in the model; sync: the training set's size, exactly, whatever crashed; async: at least that (a record re-queued after a crash may count twice)",
	"trainers":                   "one object per trainer, by id",
	"trainers[].id":              "the trainer's index",
	"trainers[].name":            "`trainer-<id>`, the name `gctl job logs -w` takes",
	"trainers[].node":            "the node it runs on",
	"trainers[].pid":             "its process id on that node (0 when none)",
	"trainers[].state":           "see [Worker states](#worker-states)",
	"trainers[].restarts":        "times its agent restarted it",
	"trainers[].budget_used":     budgetUsed,
	"trainers[].reason":          "why the state is what it is, when that is not obvious (`hung`: what the master saw)",
	"trainers[].step_ms":         "sync: its last micro-batch time in ms, from hand-out to report; null before its first",
	"pservers":                   "one object per pserver, by index",
	"pservers[].index":           "the pserver's index: it holds the index-th slice of the parameters",
	"pservers[].name":            "`pserver-<index>`",
	"pservers[].node":            "as for trainers",
	"pservers[].pid":             "as for trainers",
	"pservers[].addr":            "the address it serves the trainers on",
	"pservers[].state":           "as for trainers",
	"pservers[].restarts":        "as for trainers",
	"pservers[].checkpoint_step": "the step of its newest checkpoint; 0 before its first",
	"pservers[].budget_used":     budgetUsed,
	"pservers[].reason":          "as for trainers",
	"master":                     "the job's master",
	"master.name":                "`master`",
	"master.node":                "as for trainers",
	"master.pid":                 "as for trainers",
	"master.restarts":            "as for trainers",
	"master.budget_used":         budgetUsed,
	"restart_budget":             "the job's crash budget per role (spec `restarts`)",
	"restart_budget.limit":       "crashes within the window a role may have",
	"restart_budget.window":      "the window, a Go duration",
	"metrics":                    "the losses of the newest finished pass; each null until measured",
	"metrics.train_loss":         "mean training loss: mean squared error for linear (no ½), mean cross-entropy for softmax and mlp",
	"metrics.test_loss":          "the same over the test shards; null without `data.test`",
	"metrics.test_accuracy":      "classifiers: the fraction of test records classified right, in [0, 1]; null for regression",
	"model_dir":                  "where the model is written after every pass (see [Model files](#model-files))",
	"created":                    "when the job was submitted",
	"owner":                      "who submitted it, `name (role)`; absent for a job submitted before roles existed",
	"priority":                   "the spec's `priority`: among the jobs that wait, a higher one is placed first",
	"events":                     "the newest events of the job (`gctl job events` lists them all)",
	"events[].time":              "when it happened",
	"events[].what":              "what happened, in words",
	"warnings":                   "conditions the job survives but an operator should fix: a pserver whose checkpoint writes fail, a master that cannot write a pass's model (training waits for it); empty when none",
	"history":                    "one object per finished pass, oldest first",
	"history[].pass":             "the pass, from 0",
	"history[].train_loss":       "as metrics.train_loss, for this pass",
	"history[].test_loss":        "as metrics.test_loss, for this pass",
	"history[].test_accuracy":    "as metrics.test_accuracy; null for regression",
	"history[].records_per_s":    "samples / seconds",
	"history[].seconds":          "wall time from the end of the previous pass (or the start) to the end of this pass's evaluation, rollbacks included",
	"history[].samples":          "as samples_applied for this pass",
	"history[].step":             "the global step at the pass's end",
	"history[].ended":            "when the pass's evaluation ended",
	"trainers_count":             "the desired trainer count (`gctl job scale` moves it)",
	"trainers_min":               "its lower bound",
	"trainers_max":               "its upper bound",
	"trainers_current":           "trainers running now",
	"pservers_count":             "the desired pserver count",
	"pservers_min":               "its lower bound",
	"pservers_max":               "its upper bound",
	"pservers_current":           "pservers running now",
	"global_batch":               "records of one sync step",
	"pservers_resharding":        "true while training pauses to re-shard the parameters over pservers_count pservers",
	"reshard_pause_ms":           "how long the last finished re-shard paused training; 0 when none finished",
}

var jobRowMeanings = map[string]string{
	"name":     "the job's name",
	"state":    "as in `job status`",
	"pass":     "as in `job status`",
	"passes":   "passes the job runs",
	"trainers": "trainers the spec asks for",
	"pservers": "pservers the spec asks for",
	"loss":     "the newest test loss, else train loss; null before the first pass ends",
	"created":  "when the job was submitted",
	"age":      "time since then, as the table shows it (`3m`)",
	"owner":    "who submitted it, as in the status",
}

var workerRowMeanings = map[string]string{
	"name":     "`master`, `pserver-<i>` or `trainer-<i>`",
	"node":     "the node it runs on",
	"pid":      "its process id there",
	"state":    "see [Worker states](#worker-states)",
	"restarts": "times its agent restarted it",
	"start":    "when its current process started",
	"gpus":     "the GPUs of its node placement gave it (`resources.<role>.gpu`), as its `CUDA_VISIBLE_DEVICES` names them; empty when it asked none",
}

var nodeRowMeanings = map[string]string{
	"name":             "the node's name (`--node-name`)",
	"addr":             "its agent's API address",
	"state":            "see [Node states](#node-states)",
	"cpu":              "CPUs it offers to placement",
	"memory":           "bytes of memory it offers to placement",
	"gpus":             "GPUs it offers to placement",
	"cpu_used":         "CPUs the workers placed on it ask for (jobs that have not ended); `cpu` minus this is free",
	"memory_used":      "bytes of memory the workers placed on it ask for",
	"gpus_used":        "GPUs the workers placed on it ask for",
	"labels":           "its `--labels`",
	"roles":            "job processes placed on it, `<job>/<worker>`",
	"devices":          "its GPUs that placed workers hold, by index",
	"devices[].index":  "the GPU's index on the node (0 to `gpus` - 1), as `CUDA_VISIBLE_DEVICES` names it",
	"devices[].holder": "the worker that holds it, `<job>/<worker>`",
	"cert_not_after":   "when its node certificate (`--tls-cert`) expires, RFC 3339; null without TLS. The table view warns on stderr 14 days before",
}

var quotaMeanings = map[string]string{
	"user":        "the user (a client certificate's or token's name; `anonymous` on an agent without TLS)",
	"cpu":         "CPUs the user's placed workers may ask together; null: no limit",
	"memory":      "bytes of memory they may ask together; null: no limit",
	"gpus":        "GPUs they may ask together; null: no limit",
	"jobs":        "jobs of the user that may have placed workers at once; null: no limit",
	"cpu_used":    "CPUs the user's placed workers ask now (jobs that have not ended)",
	"memory_used": "bytes of memory they ask now",
	"gpus_used":   "GPUs they ask now",
	"jobs_used":   "jobs of the user with placed workers now",
}

var eventMeanings = map[string]string{
	"time": "when it happened",
	"what": "what happened, in words",
}

var manifestMeanings = map[string]string{
	"kind":                "the model kind (`linear`, `softmax`, `mlp`, `program`)",
	"inputs":              "features per record",
	"outputs":             "outputs or classes",
	"hidden":              "hidden layer widths (mlp)",
	"pass":                "the pass this model is the end of",
	"step":                "the global step at that point",
	"params":              "the parameter tensors, in the model's order",
	"params[].name":       "the parameter's name",
	"params[].shape":      "its shape, row-major",
	"params[].file":       "its file in the pass directory: raw little-endian float32, ending `.f32`",
	"params[].sha256":     "lowercase hex SHA-256 of exactly that file's bytes: two models are equal when their digests are",
	"optimizer":           "the optimizer's state at `step`, which `init_from.optimizer_state` loads (absent in models written before gtrain kept it, and in exports)",
	"optimizer.kind":      "the job's `optimizer.kind`",
	"tables":              "a recommender's embedding rows at `step`, one entry per id field: every row ever updated (the others are their initial values, from the seed), sorted by id",
	"tables[].name":       "the id field",
	"tables[].dim":        "values per row",
	"tables[].rows":       "rows stored",
	"tables[].ids_file":   "`table.NAME.ids`: the rows' ids, little-endian uint64",
	"tables[].ids_sha256": "its sha256",
	"tables[].file":       "`table.NAME.f32`: rows × dim values, little-endian float32, in the ids' order",
	"tables[].sha256":     "its sha256",
	"optimizer.slots":     "per slot (momentum: velocity; adagrad: sum of squares; adam: first, then second moment; sgd: none), one entry per parameter as in `params`, in files `NAME.slotK.f32`",
}

var shardMetaMeanings = map[string]string{
	"features":             "features per record",
	"classes":              "0 for regression; else labels are class indices in [0, classes)",
	"part":                 "`train` or `test`",
	"labels":               "what the agent checks a job's model against at submission",
	"labels.min":           "the least label",
	"labels.max":           "the greatest label",
	"labels.whole":         "every label is a whole number",
	"labels.not_whole":     "the first label that is not, when whole is false",
	"id_max":               "per id field, the largest id of the shard's records (absent in shards written before it was recorded): a table's fixed `vocab` is checked against it at submit",
	"id_fields":            "the id fields of every record, in record order; absent in a dense shard (whose `features` is then at least 1)",
	"id_fields[].name":     "the field's name (a letter, then letters, digits or `_`; at most 64)",
	"id_fields[].weighted": "each id carries a float32 weight",
}

var statsMeanings = map[string]string{
	"features": "features per record",
	"mean":     "per feature, the mean over the training part",
	"std":      "per feature, the population standard deviation (0: the column is only centred)",
}

var benchResultMeanings = map[string]string{
	"name":    "the figure, e.g. `pserver_pushpull`",
	"value":   "what was measured",
	"unit":    "its unit",
	"ceiling": "the bound measured in the same run (0: an absolute figure)",
	"ratio":   "value / ceiling",
	"note":    "what the ceiling is, or how the figure was taken",
}
