package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// shardName matches the suffix ShardPath writes: -00003-of-00004.
var shardName = regexp.MustCompile(`^(.*)-(\d{5,})-of-(\d{5,})$`)

// ParseShardName splits a shard's path into its set (the path without the
// -NNNNN-of-MMMMM suffix, e.g. "data/housing-train") and the set's shard
// count MMMMM; ok is false for a file not named by ShardPath. Two files of
// one set and another count are two conversions of the same data.
func ParseShardName(path string) (set string, of int, ok bool) {
	m := shardName.FindStringSubmatch(path)
	if m == nil {
		return "", 0, false
	}
	n, err := strconv.Atoi(m[3])
	if err != nil {
		return "", 0, false
	}
	return m[1], n, true
}

// otherSets lists the shards of PREFIX-PART with another count than shards:
// what a conversion would leave beside its own set.
func otherSets(prefix, part string, shards int) ([]string, error) {
	pattern := escapeGlob(prefix+"-"+part) + "-*-of-*"
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("dataset: looking for older shards %s: %w", pattern, err)
	}
	var stale []string
	for _, m := range matches {
		if set, of, ok := ParseShardName(m); ok && set == prefix+"-"+part && of != shards {
			stale = append(stale, m)
		}
	}
	slices.Sort(stale)
	return stale, nil
}

// escapeGlob quotes the glob characters of a literal path.
func escapeGlob(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(s)
}

// describeSets names the sets of files by their shard count:
// "housing-train-*-of-00004 (4 files)".
func describeSets(files []string) string {
	count := map[string]int{}
	var order []string
	for _, f := range files {
		set, of, _ := ParseShardName(f)
		key := fmt.Sprintf("%s-*-of-%05d", set, of)
		if count[key] == 0 {
			order = append(order, key)
		}
		count[key]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%s (%d files)", k, count[k])
	}
	return strings.Join(parts, ", ")
}

// checkOtherSets refuses to write beside a set of another shard count
// (unless replace), and returns the files of such sets, which Convert
// removes after writing when replace is set.
func checkOtherSets(o ConvertOptions, parts []string) ([]string, error) {
	var stale []string
	for _, part := range parts {
		files, err := otherSets(o.OutPrefix, part, o.Shards)
		if err != nil {
			return nil, err
		}
		stale = append(stale, files...)
	}
	if len(stale) > 0 && !o.Replace {
		return nil, fmt.Errorf("%w: %s already holds %s; writing %d shards beside them would leave both sets, "+
			"and a glob such as %s-* would train on both: pass --replace to remove the old set, or choose another --out prefix",
			ErrOtherSet, filepath.Dir(o.OutPrefix), describeSets(stale), o.Shards, filepath.Base(o.OutPrefix)+"-"+parts[0])
	}
	return stale, nil
}

// removeFiles removes the shards of a replaced set.
func removeFiles(files []string) error {
	for _, f := range files {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("dataset: removing the replaced shard %s: %w", f, err)
		}
	}
	return nil
}
