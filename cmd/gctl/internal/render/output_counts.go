package render

import (
	"fmt"
	"io"

	"github.com/gtrain/gtrain/api"
)

// writeCounts adds the desired and current counts and their bounds to the
// `gctl job status` table.
func writeCounts(tw io.Writer, st api.JobStatus) {
	fmt.Fprintf(tw, "Trainers:\tdesired %d, current %d (min %d, max %d)\n", st.TrainersCount, st.TrainersCurrent, st.TrainersMin, st.TrainersMax)
	fmt.Fprintf(tw, "Pservers:\tdesired %d, current %d (min %d, max %d)%s\n", st.PserversCount, st.PserversCurrent, st.PserversMin, st.PserversMax, reshardNote(st))
	if st.GlobalBatch > 0 {
		fmt.Fprintf(tw, "Global batch:\t%d records per step\n", st.GlobalBatch)
	}
}

// reshardNote says a re-shard is under way, or how long the last one
// paused training.
func reshardNote(st api.JobStatus) string {
	switch {
	case st.PserversResharding:
		return "; re-sharding"
	case st.ReshardPauseMs > 0:
		return fmt.Sprintf("; last re-shard paused training %d ms", st.ReshardPauseMs)
	}
	return ""
}
