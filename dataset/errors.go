package dataset

import "errors"

var (
	// ErrExampleSize: a record's byte length does not match the shard's feature count.
	ErrExampleSize = errors.New("dataset: example has the wrong size")
	// ErrBadMeta: a shard's header meta is not valid ShardMeta JSON.
	ErrBadMeta = errors.New("dataset: bad shard meta")
	// ErrMetaMismatch: shards read together disagree on their feature count.
	ErrMetaMismatch = errors.New("dataset: shards disagree")
	// ErrBadLabel: a label is not a class index of a classification shard.
	ErrBadLabel = errors.New("dataset: bad label")
	// ErrNoMatch: a glob matched no file.
	ErrNoMatch = errors.New("dataset: no file matches")
	// ErrBadOptions: Convert was given options it cannot honour.
	ErrBadOptions = errors.New("dataset: bad convert options")
	// ErrBadLine: a line of a text input is not a row of numbers.
	ErrBadLine = errors.New("dataset: bad input line")
	// ErrBadIDX: an IDX file's header or size is wrong.
	ErrBadIDX = errors.New("dataset: bad IDX file")
	// ErrBadGzip: a gzip-compressed input is damaged, or a .gz file is not gzip.
	ErrBadGzip = errors.New("dataset: bad gzip input")
	// ErrBadStats: a normalisation statistics file is unreadable or invalid.
	ErrBadStats = errors.New("dataset: bad statistics file")
	// ErrStatsMismatch: statistics given to apply do not fit the records.
	ErrStatsMismatch = errors.New("dataset: statistics do not fit the records")
	// ErrOtherSet: the output prefix holds shards of another shard count.
	ErrOtherSet = errors.New("dataset: the output prefix holds another set of shards")
	// ErrNoRecords: the input holds no records, or leaves none for training.
	ErrNoRecords = errors.New("dataset: no records")
)
