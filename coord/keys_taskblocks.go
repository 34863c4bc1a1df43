package coord

import "fmt"

// TaskBlockPrefix holds the blocks of one slot's task states. A block packs
// the states of a run of task IDs into one value, so that a job of a million
// tasks is a few thousand keys (a few MiB), not a million: one key per task
// would not fit a save in the master's save timeout nor etcd's quota.
func TaskBlockPrefix(job string, slot int) string { return TaskSlotPrefix(job, slot) + "b" }

// TaskBlockKey zero-pads the block index so that a range read returns
// blocks, hence tasks, in ID order.
func TaskBlockKey(job string, slot, block int) string {
	return fmt.Sprintf("%s%08d", TaskBlockPrefix(job, slot), block)
}

// ParseTaskBlockKey returns the block index of a key written by TaskBlockKey
// into slot.
func ParseTaskBlockKey(job string, slot int, key string) (block int, ok bool) {
	return indexAfter(TaskBlockPrefix(job, slot), key)
}
