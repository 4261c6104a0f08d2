/* progress.h — a training run's progress on the terminal (prefix: progress_).
 *
 * The loop of the core (train.h) reports at every validation and once at its end; this
 * is how the command line shows those reports on standard error: a bar rewritten in
 * place when standard error is a terminal, one line per validation otherwise.
 */
#ifndef ATTNLAB_PROGRESS_H
#define ATTNLAB_PROGRESS_H

#include "../core/train.h"

/* The progress hook of attnlab train (train_hooks' progress; ctx unused): TRAIN_BAR
 * redraws "[====>   ] step S/N  loss  acc  steps/s  ETA h:mm:ss" on one line and ends
 * it when the loop is done; TRAIN_LINES prints "MODEL step S/N  loss  token_acc  seq/s"
 * once per validation. */
void progress_show(void *ctx, train_progress style, const train_tick *tick);

#endif
