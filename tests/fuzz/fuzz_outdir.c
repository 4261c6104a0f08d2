/* fuzz_outdir.c — libFuzzer harness for what the writing commands do to an output
 * directory that holds anything at all, symbolic links included: whatever it holds,
 * nothing outside it may change (safedir.h's rule).
 *
 * Input. Pairs of bytes, each an entry planted in a fresh output directory OUT before the
 * commands' steps run. The first byte picks the folder (its low 2 bits: OUT, OUT/trace,
 * OUT/trace/lstm, OUT/figures) and the name (the rest, modulo 10: trace, figures, runs,
 * lstm, transformer, x.tsv, enc.cell.tsv, accuracy.png, .lock, eval.tsv); the second
 * what the entry is (modulo 8): a file, a folder, a link to the outside directory, to
 * its folder lstm/, to its file keep.tsv, a dangling link into it, a link to "..", a
 * link to ".". An entry whose folder is missing or is not a real directory (looked at
 * here with lstat, not by the code under test) is not planted, so planting itself never
 * writes outside. The seeds (tests/fuzz/corpus/outdir) plant the links the tests of
 * tests/test_fsafe.c plant, one input each.
 *
 * The steps, in the commands' order: runlock_take on OUT (report, eval, train); the
 * report's report_check_out, then, when it passed, report_copy_traces from a fixed run
 * whose trace/ holds two tables, safedir_enter of figures/ and a figure written there
 * with afile_write, and eval.tsv written into OUT; train --force's safedir_check of
 * trace/ and safedir_clear of its tables. Every refusal must be one line. Afterwards the
 * outside directory must hold exactly what it held — keep.tsv and lstm/enc.cell.tsv with
 * their bytes, nothing else (no lock file, no copy, no figure) — or the harness aborts.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/core/afile.h"
#include "../../common/cli/report.h"
#include "../../common/cli/runlock.h"
#include "../../common/cli/safedir.h"
#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_OUTDIR_KEEP "keep\n" /* what both outside files hold */
#define FUZZ_OUTDIR_MAX_ENTRIES 64

static const char *const fuzz_outdir_places[] = {"", "/trace", "/trace/lstm", "/figures"};
static const char *const fuzz_outdir_names[] = {
    "trace", "figures", "runs",         "lstm", "transformer",
    "x.tsv", "enc.cell.tsv", "accuracy.png", ".lock", "eval.tsv",
};
#define FUZZ_OUTDIR_N_NAMES (sizeof fuzz_outdir_names / sizeof fuzz_outdir_names[0])

/* The scratch directory of this process: top/out (fuzzed), top/outside (watched),
 * top/src (the run whose trace is copied). */
static char fuzz_outdir_top[256], fuzz_outdir_out[300], fuzz_outdir_outside[300],
    fuzz_outdir_src[300];

/* Removes the tree at path without following a link: a link is removed, not entered. */
static void fuzz_outdir_rm(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            char sub[1024];
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            fuzz_outdir_rm(sub);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void fuzz_outdir_remove(void)
{
    fuzz_outdir_rm(fuzz_outdir_top);
}

/* Writes text into path, replacing it. Returns 0 or -1. */
static int fuzz_outdir_put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f) == 0 ? 0 : -1;
}

/* Makes the scratch directory once: the outside files and the run to copy from. */
static int fuzz_outdir_open(void)
{
    if (fuzz_outdir_top[0])
        return 0;
    snprintf(fuzz_outdir_top, sizeof fuzz_outdir_top, "%s/attnlab-fuzz-outdir-XXXXXX",
             fuzz_scratch_dir());
    if (!mkdtemp(fuzz_outdir_top)) {
        fuzz_outdir_top[0] = '\0';
        return -1;
    }
    atexit(fuzz_outdir_remove);
    char path[400];
    snprintf(fuzz_outdir_out, sizeof fuzz_outdir_out, "%s/out", fuzz_outdir_top);
    snprintf(fuzz_outdir_outside, sizeof fuzz_outdir_outside, "%s/outside", fuzz_outdir_top);
    snprintf(fuzz_outdir_src, sizeof fuzz_outdir_src, "%s/src", fuzz_outdir_top);
    int bad = mkdir(fuzz_outdir_outside, 0755) != 0;
    snprintf(path, sizeof path, "%s/lstm", fuzz_outdir_outside);
    bad |= mkdir(path, 0755) != 0;
    snprintf(path, sizeof path, "%s/lstm/enc.cell.tsv", fuzz_outdir_outside);
    bad |= fuzz_outdir_put(path, FUZZ_OUTDIR_KEEP) != 0;
    snprintf(path, sizeof path, "%s/keep.tsv", fuzz_outdir_outside);
    bad |= fuzz_outdir_put(path, FUZZ_OUTDIR_KEEP) != 0;
    bad |= mkdir(fuzz_outdir_src, 0755) != 0;
    snprintf(path, sizeof path, "%s/trace", fuzz_outdir_src);
    bad |= mkdir(path, 0755) != 0;
    snprintf(path, sizeof path, "%s/trace/enc.cell.tsv", fuzz_outdir_src);
    bad |= fuzz_outdir_put(path, "src\\unit\t0\t1\n1\t0.5\t-0.25\n2\t0.125\t1\n") != 0;
    snprintf(path, sizeof path, "%s/trace/x.tsv", fuzz_outdir_src);
    bad |= fuzz_outdir_put(path, "tgt\\src\ta\tb\nc\t1\t0\n") != 0;
    return bad ? -1 : 0;
}

/* Is every folder from OUT down to OUT+place a real directory (lstat)? */
static int fuzz_outdir_real(const char *place)
{
    char path[400];
    struct stat st;
    int at = snprintf(path, sizeof path, "%s", fuzz_outdir_out);
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    for (const char *p = place; *p;) {
        const size_t len = strcspn(p + 1, "/") + 1;
        at += snprintf(path + at, sizeof path - (size_t)at, "%.*s", (int)len, p);
        if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            return 0;
        p += len;
    }
    return 1;
}

/* Plants entry name in folder place, of the kind given. */
static void fuzz_outdir_plant(const char *place, const char *name, unsigned kind)
{
    if (!fuzz_outdir_real(place))
        return;
    char path[600], target[400];
    snprintf(path, sizeof path, "%s%s/%s", fuzz_outdir_out, place, name);
    switch (kind % 8) {
    case 0: { /* O_EXCL: never through an entry planted before, a link included */
        const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0) {
            (void)!write(fd, "planted\n", 8);
            close(fd);
        }
        return;
    }
    case 1: mkdir(path, 0755); return;
    case 2: snprintf(target, sizeof target, "%s", fuzz_outdir_outside); break;
    case 3: snprintf(target, sizeof target, "%s/lstm", fuzz_outdir_outside); break;
    case 4: snprintf(target, sizeof target, "%s/keep.tsv", fuzz_outdir_outside); break;
    case 5: snprintf(target, sizeof target, "%s/new", fuzz_outdir_outside); break;
    case 6: snprintf(target, sizeof target, ".."); break;
    default: snprintf(target, sizeof target, "."); break;
    }
    (void)symlink(target, path); /* EEXIST: planted already */
}

/* Aborts unless err holds one line (a refusal of the code under test). */
static void fuzz_outdir_one_line(const char *err)
{
    if (err[0] == '\0' || strchr(err, '\n'))
        abort();
}

/* Aborts unless folder dir holds exactly the regular file or folder names given (n). */
static void fuzz_outdir_holds(const char *dir, const char *const *names, size_t n)
{
    DIR *d = opendir(dir);
    if (!d)
        abort();
    size_t seen = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        size_t k = 0;
        while (k < n && strcmp(e->d_name, names[k]) != 0)
            k++;
        if (k == n)
            abort(); /* something was added outside */
        seen++;
    }
    closedir(d);
    if (seen != n)
        abort(); /* something was removed outside */
}

/* Aborts unless path is a regular file holding FUZZ_OUTDIR_KEEP. */
static void fuzz_outdir_kept(const char *path)
{
    struct stat st;
    char buf[64] = "";
    FILE *f = lstat(path, &st) == 0 && S_ISREG(st.st_mode) ? fopen(path, "rb") : NULL;
    if (!f)
        abort();
    const size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = '\0';
    if (strcmp(buf, FUZZ_OUTDIR_KEEP) != 0)
        abort();
}

static int fuzz_outdir_write_figure(FILE *f, const void *ctx)
{
    (void)ctx;
    return fputs("not a PNG\n", f) < 0 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_outdir_open() != 0)
        return 0;
    fuzz_outdir_rm(fuzz_outdir_out);
    if (mkdir(fuzz_outdir_out, 0755) != 0)
        return 0;
    for (size_t i = 0; i + 1 < size && i / 2 < FUZZ_OUTDIR_MAX_ENTRIES; i += 2)
        fuzz_outdir_plant(fuzz_outdir_places[data[i] & 3u],
                          fuzz_outdir_names[(data[i] >> 2) % FUZZ_OUTDIR_N_NAMES], data[i + 1]);

    const char *out = fuzz_outdir_out;
    char err[2048] = "", path[AFILE_PATH_MAX];
    runlock l;
    if (runlock_take(&l, out, err, sizeof err) == 0)
        runlock_release(&l);
    else
        fuzz_outdir_one_line(err);

    /* report: check, copy the traces, draw a figure, write a table */
    static const char *const models[] = {"lstm", "transformer"};
    const char *runs[] = {fuzz_outdir_src, fuzz_outdir_src};
    report_facts fx = {.n_models = 2, .models = models, .runs = runs};
    err[0] = '\0';
    if (report_check_out(out, &fx, err, sizeof err) != 0) {
        fuzz_outdir_one_line(err);
    } else {
        if (report_copy_traces(out, &fx, err, sizeof err) != 0)
            fuzz_outdir_one_line(err);
        err[0] = '\0';
        if (safedir_enter(out, "figures", path, sizeof path, err, sizeof err) != 0)
            fuzz_outdir_one_line(err);
        else if (afile_write(path, "accuracy.png", fuzz_outdir_write_figure, NULL, err,
                             sizeof err) != 0)
            fuzz_outdir_one_line(err);
    }
    err[0] = '\0';
    if (afile_write(out, "eval.tsv", fuzz_outdir_write_figure, NULL, err, sizeof err) != 0)
        fuzz_outdir_one_line(err);

    /* train --force: check trace/, then remove its tables */
    err[0] = '\0';
    if (safedir_check(out, "trace", err, sizeof err) != 0)
        fuzz_outdir_one_line(err);
    else if (safedir_clear(out, "trace", 0, ".tsv", err, sizeof err) != 0)
        fuzz_outdir_one_line(err);

    /* the outside directory, exactly as it was */
    static const char *const top[] = {"keep.tsv", "lstm"};
    static const char *const below[] = {"enc.cell.tsv"};
    fuzz_outdir_holds(fuzz_outdir_outside, top, 2);
    snprintf(path, sizeof path, "%s/lstm", fuzz_outdir_outside);
    fuzz_outdir_holds(path, below, 1);
    snprintf(path, sizeof path, "%s/keep.tsv", fuzz_outdir_outside);
    fuzz_outdir_kept(path);
    snprintf(path, sizeof path, "%s/lstm/enc.cell.tsv", fuzz_outdir_outside);
    fuzz_outdir_kept(path);
    return 0;
}
