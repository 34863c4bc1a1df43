package dataset

import "math/rand/v2"

// recordOrderSalt keeps the record-order stream apart from the other streams
// seeded by the job's seed (the master's task order uses PCG(seed, pass)).
const recordOrderSalt = 0x6a09e667f3bcc909

// RecordOrder is the order in which a task's n records are read in a pass:
// order[i] is the index (within the task, counting across its chunks) of the
// record read at position i. With shuffle it is a seeded permutation that
// depends only on (seed, pass, task, n): every master and trainer, and a
// restarted one, computes the same, and each pass gets another. Without
// shuffle it is the stored order, 0..n-1.
func RecordOrder(shuffle bool, seed uint64, pass, task, n int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if !shuffle {
		return order
	}
	stream := uint64(uint32(pass))<<32 | uint64(uint32(task))
	rand.New(rand.NewPCG(seed^recordOrderSalt, stream)).Shuffle(n, func(i, j int) {
		order[i], order[j] = order[j], order[i]
	})
	return order
}
