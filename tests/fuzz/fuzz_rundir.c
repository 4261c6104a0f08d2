/* fuzz_rundir.c — libFuzzer harness for report's run loader: any files at all in a run
 * directory must be loaded or refused with one line by rundir_load, never crash, read
 * out of bounds or leak.
 *
 * Input. The first byte says which files are absent (bit k set: file k is not written);
 * the rest is split at the byte 0x1E (ASCII's record separator, which no TSV file of
 * attnlab holds) into the contents of the files, in this order:
 *     0 config.tsv  1 build.tsv  2 eval.tsv  3 eval_positions.tsv  4 train_log.tsv
 *     5 cost.tsv    6 manifest.tsv (the comparison's, which report turns into a table)
 * A file present with no part left is written empty. The seeds (tests/fuzz/corpus/rundir)
 * are the run directories of a smoke comparison, first byte 0: every file present.
 *
 * Each input is written into a directory made for this process in fuzz_scratch_dir()
 * (memory, not disk, where there is one; files not present are
 * removed, so every load sees exactly this input), then loaded with rundir_load and
 * freed. A run that loads must keep rundir.h's promise: every listed cell of every row
 * a finite number. manifest.tsv, which rundir_load does not read, is read as report.c's
 * html_table reads it: tsv_read, then every cell.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/cli/rundir.h"
#include "../../common/core/tsv.h"
#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_RUNDIR_SEP 0x1e /* between the files of one input */

static const char *const fuzz_rundir_files[] = {
    "config.tsv", "build.tsv", "eval.tsv", "eval_positions.tsv",
    "train_log.tsv", "cost.tsv", "manifest.tsv",
};
#define FUZZ_RUNDIR_N_FILES (sizeof fuzz_rundir_files / sizeof fuzz_rundir_files[0])

/* The directory of this process, and the path of each file in it. */
static char fuzz_rundir_dir[256];
static char fuzz_rundir_path[FUZZ_RUNDIR_N_FILES][300];

static void fuzz_rundir_remove(void)
{
    for (size_t k = 0; k < FUZZ_RUNDIR_N_FILES; k++)
        unlink(fuzz_rundir_path[k]);
    rmdir(fuzz_rundir_dir);
}

/* Makes the directory once, in fuzz_scratch_dir(). Returns 0, or -1 when it cannot. */
static int fuzz_rundir_open(void)
{
    if (fuzz_rundir_dir[0])
        return 0;
    snprintf(fuzz_rundir_dir, sizeof fuzz_rundir_dir, "%s/attnlab-fuzz-rundir-XXXXXX",
             fuzz_scratch_dir());
    if (!mkdtemp(fuzz_rundir_dir)) {
        fuzz_rundir_dir[0] = '\0';
        return -1;
    }
    for (size_t k = 0; k < FUZZ_RUNDIR_N_FILES; k++)
        snprintf(fuzz_rundir_path[k], sizeof fuzz_rundir_path[k], "%s/%s", fuzz_rundir_dir,
                 fuzz_rundir_files[k]);
    atexit(fuzz_rundir_remove);
    return 0;
}

/* Writes n bytes of p as file k. Returns 0 or -1. */
static int fuzz_rundir_write(size_t k, const uint8_t *p, size_t n)
{
    FILE *f = fopen(fuzz_rundir_path[k], "wb");
    if (!f)
        return -1;
    const int bad = fwrite(p, 1, n, f) != n;
    return fclose(f) != 0 || bad ? -1 : 0;
}

/* What rundir_load promises of a run it accepts (rundir.h): every record within its
 * range and kind, each array sorted by its key with one record per key, at least one
 * length evaluated. Anything else is a bug: abort, so the fuzzer keeps the input. */
static void fuzz_rundir_check(const rundir *r)
{
    if (r->n_eval == 0)
        abort();
    for (size_t i = 0; i < r->n_eval; i++) {
        const rundir_eval *e = &r->eval[i];
        if (e->len < 1 || !(e->token_acc >= 0 && e->token_acc <= 1) ||
            !(e->seq_acc >= 0 && e->seq_acc <= 1) || (i && e->len <= r->eval[i - 1].len))
            abort();
    }
    for (size_t i = 0; i < r->n_pos; i++) {
        const rundir_pos *p = &r->pos[i];
        if (p->position < 1 || !(p->acc >= 0 && p->acc <= 1))
            abort();
    }
    for (size_t i = 0; i < r->n_log; i++) {
        const rundir_step *l = &r->log[i];
        if (l->step < 1 || !(l->seconds >= 0) || !(l->loss >= 0) ||
            !(l->token_acc >= 0 && l->token_acc <= 1) ||
            (i && l->step <= r->log[i - 1].step))
            abort();
    }
    for (size_t i = 0; i < r->n_cost; i++) {
        const rundir_cost *c = &r->cost[i];
        if (c->len < 1 || !(c->train_ms >= 0) || !(c->flops >= 0) || !(c->decode_ms >= 0))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || fuzz_rundir_open() != 0)
        return 0;
    const unsigned absent = data[0];
    const uint8_t *p = data + 1, *end = data + size;
    for (size_t k = 0; k < FUZZ_RUNDIR_N_FILES; k++) {
        const uint8_t *sep = p < end ? memchr(p, FUZZ_RUNDIR_SEP, (size_t)(end - p)) : NULL;
        const uint8_t *stop = sep ? sep : end;
        if (absent >> k & 1u)
            unlink(fuzz_rundir_path[k]);
        else if (fuzz_rundir_write(k, p, (size_t)(stop - p)) != 0)
            return 0;
        p = sep ? sep + 1 : end;
    }

    rundir r;
    char err[512] = "";
    if (rundir_load(&r, fuzz_rundir_dir, err, sizeof err) == 0) {
        fuzz_rundir_check(&r);
        rundir_free(&r);
    } else if (err[0] == '\0' || strchr(err, '\n')) {
        abort(); /* a refusal is one line */
    }

    tsv m;
    if (tsv_read(&m, fuzz_rundir_path[6], err, sizeof err) == 0) {
        size_t bytes = 0;
        for (size_t c = 0; c < m.cols; c++)
            bytes += strlen(m.cell[c]);
        for (size_t row = 0; row < m.rows; row++)
            for (size_t c = 0; c < m.cols; c++)
                bytes += strlen(tsv_get(&m, row, c));
        if (bytes > size)
            abort(); /* the cells are cut from the file: never more bytes than it had */
        tsv_free(&m);
    }
    return 0;
}
