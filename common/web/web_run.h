/* web_run.h — what the files of the page's entry point share (prefix: page_): one run's
 * state, the handles of the open runs and the text and error the page reads back.
 * Internal to common/web/ (web_run.c: this shared state; web_page.c: runs and training;
 * web_settings.c: a run's configuration from the page's settings; web_decode.c: decoding
 * an input and its trace).
 */
#ifndef ATTNLAB_WEB_RUN_H
#define ATTNLAB_WEB_RUN_H

#include <signal.h>
#include <stdio.h>

#include "../core/afile.h"
#include "../core/config.h"
#include "../core/model.h"
#include "../core/optim.h"
#include "../core/rng.h"
#include "../core/train.h"

#define PAGE_RUNS_MAX 16        /* runs open at once in one module (the page: one) */
#define PAGE_ERR_MAX 512
#define PAGE_LENGTHS_MAX 64     /* evaluation lengths of a run, as the command line's */
#define PAGE_SETTINGS_MAX 4096

/* One run: its configuration, model, optimiser, streams and the best validation, the log
 * so far (a memory stream, written whole to train_log.tsv after each chunk), and where it
 * stands. A run opened from a checkpoint has a model and a configuration only. */
typedef struct page_run {
    char dir[AFILE_PATH_MAX];
    config c;
    model *m;
    rng_streams r;
    optim o;
    train_best best;
    FILE *log;
    char *log_buf;
    size_t log_len;
    size_t step;              /* the last step trained (0: none yet) */
    size_t pause_at;          /* the chunk pauses at the first validation from this step */
    double seconds;           /* training seconds so far, validation left out */
    int early;                /* TRAIN_PLATEAU or TRAIN_TARGET when the stopping rule ended it */
    int trained;              /* 1: made here and trainable; 0: opened from a checkpoint */
    int done;                 /* training is over (cap, rule, stop, failure) */
    volatile sig_atomic_t stop; /* set by the pause hook: train_run stops before the next step */
    size_t lens[PAGE_LENGTHS_MAX], nl, samples; /* the final evaluation */
} page_run;

/* The open runs, by handle - 1 (web_run.c); NULL: a free handle. */
extern page_run *page_runs[PAGE_RUNS_MAX];

/* The one-line reason of the last failure, read by page_error. */
extern char page_err[PAGE_ERR_MAX];

/* Replaces the text page_text returns by text (malloc'ed; taken over). */
void page_set_text(char *text);

/* The open run of handle h, or NULL with one line in page_err. */
page_run *page_get(int h);

/* The configuration of a run from settings (web_settings.c): lines or spaces of
 * key=value, with the keys of config.h (model first, whatever its place), plus
 * eval_lengths=A,B,... and samples=N for the final evaluation, as `attnlab train --model
 * M --KEY VALUE ...` builds it. The equivalent arguments are appended to args (one per
 * line). Returns 0, or -1 with one line in page_err. */
int page_configure(page_run *p, const char *settings, FILE *args);

/* Reads "A,B,C" (whole numbers from 1 to max, at most PAGE_LENGTHS_MAX) into lens.
 * Returns the count, or 0 with one line in page_err. */
size_t page_parse_lengths(const char *text, size_t max, size_t *lens);

#endif
