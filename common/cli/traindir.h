/* traindir.h — the run directory of attnlab train: who may write it, what it already
 * holds, args.txt, and the checks of --resume (prefix: traindir_).
 *
 * Design. A run directory is owned by one writer at a time: train takes DIR/.lock
 * (runlock.h) before it reads or writes anything there and holds it until it exits.
 * Then, for a new run, it looks at what DIR holds: a finished run (model.ckpt or
 * eval.tsv) or a stopped one (checkpoint.ckpt) is refused unless --force, which removes
 * that run's files first (eval.tsv, the mark of a finished run, before anything else),
 * so a stop half-way never leaves the old results beside the new run. A directory
 * holding only args.txt, config.tsv or train_log.tsv (a run stopped before its first
 * checkpoint) has nothing to lose and is simply started again. Nothing in DIR is
 * reached through a symbolic link (safedir.h): a trace/ that is a link is refused, a new
 * run, --force and --resume alike, before anything is removed or written.
 *
 * Resuming trusts no file of DIR alone: the configuration args.txt rebuilds, config.tsv
 * and the one stored in checkpoint.ckpt must agree on every field, or --resume names the
 * first field that differs and stops. Every function prints its own one-line message.
 */
#ifndef ATTNLAB_TRAINDIR_H
#define ATTNLAB_TRAINDIR_H

#include <stdio.h>

#include "../core/afile.h"
#include "../core/config.h"
#include "../core/model.h"
#include "runlock.h"
#include "../core/train.h"

/* Creates dir (and its parents) when missing and takes its lock into l; then, unless
 * force, refuses a directory holding a finished or stopped run (saying which, and how to
 * go on); with force, removes that run's files. A dir/trace that is a symbolic link is
 * refused in every case. c is the configuration of the new run,
 * compared with the old run's config.tsv to say how they differ. Returns 0, or the exit
 * status after the message (l not held). */
int traindir_claim(runlock *l, const char *dir, const config *c, int force);

/* Takes the lock of dir, the existing directory of a run to resume, into l, and refuses
 * a dir/trace that is a symbolic link. Returns 0, or the exit status after the message
 * (l not held). */
int traindir_lock_existing(runlock *l, const char *dir);

/* Writes dir/args.txt: argv[1..argc-1], one per line (argv[0] is the command word).
 * Returns 0, or -1 after the message. */
int traindir_write_args(const char *dir, int argc, char **argv);

/* Reads dir/args.txt back into an argument vector (argv[0] = "train", NULL-terminated);
 * the strings live in *text: free both *argv_out and *text. Returns the count, or -1
 * (nothing to free) with one line in err (en bytes; err may be NULL when en is 0) when
 * there is no readable args.txt (missing, a FIFO or a directory, a read error). */
int traindir_read_args(const char *dir, char ***argv_out, char **text, char *err, size_t en);

/* The command that starts the run of dir again from nothing: "attnlab train" and the
 * arguments of its args.txt, shell-quoted, with its --out replaced by dir. A new string
 * (free it), or NULL when dir holds no readable args.txt. */
char *traindir_restart_command(const char *dir);

/* Prints that the run of dir stopped before its first checkpoint, so there is nothing to
 * resume, and the command that starts it again. Returns the runtime status. */
int traindir_not_started(const char *dir);

/* Checks that dir/config.tsv holds exactly the configuration from_args that args.txt
 * gives (every field), naming the first field that differs. Returns 0, or the runtime
 * status after the message. */
int traindir_check_args(const char *dir, const config *from_args);

/* Checks that stored, the configuration in dir/checkpoint.ckpt, is the one of
 * dir/config.tsv (every field: the model, the task, every size and setting), naming the
 * first field that differs. Returns 0, or the runtime status after the message. */
int traindir_check_checkpoint(const char *dir, const config *stored);

/* Copies the lines of dir/train_log.tsv whose step is at most step (the log up to the
 * checkpoint a run resumes from; its header excluded) into log, and returns the seconds
 * column of the last one (0 when none, or when there is no log): the time of the
 * sessions before. Each line's validation is fed to the stopping rule again
 * (train_val_update), so best is what the run had at that step, its weights excepted
 * (traindir_restore_best). A log that cannot be read (not a regular file, a read error,
 * a line beyond any log's), or one that lacks the row of the last validation at or
 * before step (missing, or cut short: the checkpoint is ahead of it), returns -1 after
 * the message. */
double traindir_restore_log(const char *dir, size_t step, FILE *log, train_best *best,
                            const config *c);

/* Puts the weights of dir/best.ckpt (the best validation before the stop) into w (n
 * doubles) when that file holds a model of this size; else leaves w as it is. */
void traindir_restore_best(const char *dir, double *w, size_t n);

/* Writes the model m with the weights w (m's number of parameters) in place of its own —
 * swapped in, written, swapped back — to the temporary file of dir/name in af
 * (ckpt_stage: finished, not yet renamed; best.ckpt: the best validation's weights while
 * the run goes on). Returns 0, or -1 with one line in err (n bytes) and nothing left. */
int traindir_stage_weights(afile *af, model *m, const double *w, const char *dir,
                           const char *name, char *err, size_t n);

#endif
