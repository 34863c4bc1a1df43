package main

import (
	"fmt"
	"io"

	"github.com/gtrain/gtrain/api"
)

// writeCounts adds the desired and current counts and their bounds to the
// `gctl job status` table.
func writeCounts(tw io.Writer, st api.JobStatus) {
	fmt.Fprintf(tw, "Trainers:\tdesired %d, current %d (min %d, max %d)\n", st.TrainersCount, st.TrainersCurrent, st.TrainersMin, st.TrainersMax)
	fmt.Fprintf(tw, "Pservers:\tdesired %d, current %d (min %d, max %d)\n", st.PserversCount, st.PserversCurrent, st.PserversMin, st.PserversMax)
	if st.GlobalBatch > 0 {
		fmt.Fprintf(tw, "Global batch:\t%d records per step\n", st.GlobalBatch)
	}
}
