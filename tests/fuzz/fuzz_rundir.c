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

#include "../../common/rundir.h"
#include "../../common/tsv.h"
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

/* Aborts unless column col of every row of t is a finite number (rundir.h's promise for
 * the columns a comparison reads). */
static void fuzz_rundir_numbers(const tsv *t, long col)
{
    char err[256];
    if (t->rows > 0 && (col < 0 || (size_t)col >= t->cols))
        abort();
    for (size_t r = 0; r < t->rows; r++) {
        double v;
        if (tsv_number(t, r, (size_t)col, &v, err, sizeof err) != 0 || !isfinite(v))
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
        const tsv *tables[] = {&r.eval, &r.pos, &r.log, &r.cost};
        const long cols[][4] = {{r.e_len, r.e_tok, r.e_seq, r.e_len},
                                {r.p_len, r.p_pos, r.p_acc, r.p_len},
                                {r.l_step, r.l_sec, r.l_loss, r.l_acc},
                                {r.c_len, r.c_train, r.c_flops, r.c_decode}};
        for (size_t t = 0; t < 4; t++)
            for (size_t c = 0; c < 4; c++)
                fuzz_rundir_numbers(tables[t], cols[t][c]);
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
