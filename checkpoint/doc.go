// Package checkpoint makes a parameter server's shard durable so that a restarted
// pserver continues exactly where it stopped (and, the same way, the master's
// state). Checkpoints belong to a job, Config.Identity (the job's name and
// the create revision of its record), and within it to an owner,
// Config.OwnerName ("pserver-3", "master"). Both are in every file name
// (JOB_rREV_OWNER-step-N.ckpt) and the identity also in the file's header:
// owners, two jobs sharing a directory, and a job name reused after a purge
// never load or prune each other's files, and a file whose header names
// another job than its name is damaged.
//
// It owns the checkpoint file format (a streamed, sha256-checksummed container of
// named float32 sections plus opaque caller metadata), the commit protocol, and
// the Recorder that names the current checkpoint (etcd in production, an
// in-memory fake in tests).
//
// Commit protocol of Store.Save, in this order, so that a crash at any point
// leaves either the previous or the new checkpoint loadable:
//
//  1. stream the shard through a bufio.Writer into a temporary file in the
//     checkpoint directory, hashing the content and ending with a trailer that
//     carries the checksum;
//  2. fsync the file;
//  3. rename it to JOB_rREV_OWNER-step-NNNNNNNNNN.ckpt and fsync the directory
//     (steps 1-3 through internal/atomicfile);
//  4. record it in the Recorder with a compare-and-swap against the record this
//     Store last saw (a fenced-out writer gets ErrConflict);
//  5. only then delete files beyond Config.Keep, oldest first, except those
//     of the steps Config.KeepSteps names (a sync job's kept global
//     checkpoints, which must survive while another owner's writes fail)
//     and the bases every kept file needs (Snapshot.Base, followed down to
//     a self-contained file).
//
// A checkpoint may be incremental: Snapshot.Base names the earlier step of
// the same owner it was written on (a pserver writes its embedding rows as
// the rows changed since; see pserver's doc). The step is in the file's
// header; the package stores it, returns it and keeps the base on disk as
// long as a kept file needs it, but merging the two is the caller's. The
// protocol gains no step: a delta is one file, committed as any other, so
// every crash point leaves the previous or the new chain loadable (the
// base is a committed file the new one only reads).
//
// Store.Load never answers "no checkpoint" while a valid one exists: it tries the
// recorded file and every file of its owner and job, newest step first, and
// reports in LoadReport every candidate it had to skip and why. It returns
// ErrNoCheckpoint only when there is neither a record nor a file, and
// ErrCheckpointLost when something was checkpointed but nothing valid is left,
// so that the caller never re-initialises silently.
//
// Valid means recorded: a file whose sha256 differs from its record's is
// never loaded (ErrNotRecorded), however well it decodes. The Recorder
// names only the newest checkpoint; Config.StepRecord supplies the records
// of older steps (the job's checkpoint marks), and with it set Load and
// LoadStep load no file that nothing records.
//
// This package must not touch the pserver's in-memory state, the optimizer,
// the job spec or any etcd key other than the ones its caller names for it;
// snapshotting the live parameters (and the pause that costs) is the pserver's job.
package checkpoint
