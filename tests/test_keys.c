/* test_keys.c — the numbers of the lab keys hold for this build.
 *
 * docs/labs/keys/NN-NAME.bands.tsv, beside the key NN-NAME.md, holds the band of every
 * number the key quotes from a file the handout's commands write (an accuracy in
 * eval.tsv, a weight of a trace, the parameters in build.tsv): the smallest and largest value over seeds 1–3 under the OpenBLAS
 * kernels Haswell and SkylakeX, measured by tests/labkeys.sh and written as the keys
 * print them. Lines:
 *     file  row  column  min  max
 * file is a results/labs/ path; row picks the line of the file, by the values of other
 * columns (`len=16,position=3`) or, for a matrix such as a trace, by its place among the
 * data (`#R,C`: data row R, data column C after the row label, counting from 1); column
 * names the value (for a matrix, `weight`).
 *
 * What is checked.
 *   - static: every line is well formed, its file is written by a command of its lab's
 *     handout (an --out directory), and the band is quoted, as "MIN–MAX" (or "MIN" when
 *     both are the same), in the key of the lab in English and in Chinese: the keys say
 *     what the file measured.
 *   - runs: each lab's commands are run at full length as written (seed 1, as the
 *     handouts do) with OPENBLAS_CORETYPE=Haswell, and every band whose file was made must
 *     hold the value, rounded to the band's decimals. Training runs longer than
 *     KEYS_SHORT_STEPS steps, and the commands that read their results, are left out
 *     unless ATTNLAB_KEYS_ALL is set (`make check-keys`, about ten minutes). eval prints
 *     to the terminal and bench measures time, so neither is run (bench --layers is, with
 *     one repetition on one thread: its FLOPs, sequential operations and gradient paths
 *     do not depend on them); nor are the commands of
 *     an edited copy of the program (lab 03's, lab 06's). On a machine that cannot run the
 *     Haswell kernel (no AVX2, or not OpenBLAS) the runs are skipped with one line: the
 *     bands were measured with these kernels, and another kernel gives other bits.
 * The marking of the keys (points, "accept if" lines and the bands they name) is checked
 * by test_rubric.c.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testhandout.h"
#include "testutil.h"

#define KEYS_SHORT_STEPS 300
#define MAX_BANDS 1024
#define FIELD_LEN 160

/* One line of a bands file. */
typedef struct band {
    char lab[8];
    char file[PATH_LEN];
    char row[FIELD_LEN];
    char column[FIELD_LEN];
    char min[32], max[32];
    const char *path; /* the bands file */
    int line;
} band;

static band bands[MAX_BANDS];
static size_t n_bands;
static char band_files[32][PATH_LEN];

/* Reads every docs/labs/keys/NN-*.bands.tsv into bands[] (comment lines start with '#';
 * the first other line is the header); fails the test on a malformed line. */
static void read_bands(void)
{
    n_bands = 0;
    const size_t nf = ho_find_files("docs/labs/keys/[0-9][0-9]-*.bands.tsv", band_files, 32);
    for (size_t i = 0; i < nf; i++) {
        const char *path = band_files[i];
        char *text = ho_read_file(path);
        ck_assert_msg(text != NULL, "cannot read %s", path);
        const char *base = strrchr(path, '/') + 1;
        int lineno = 0, header = 0;
        for (char *line = text, *next; line && *line; line = next) {
            next = strchr(line, '\n');
            if (next)
                *next++ = '\0';
            lineno++;
            if (line[0] == '#' || line[0] == '\0')
                continue;
            if (!header) {
                ck_assert_msg(strcmp(line, "file\trow\tcolumn\tmin\tmax") == 0,
                              "%s:%d: the header must be file, row, column, min, max", path,
                              lineno);
                header = 1;
                continue;
            }
            ck_assert_msg(n_bands < MAX_BANDS, "more than %d bands", MAX_BANDS);
            band *b = &bands[n_bands++];
            memset(b, 0, sizeof *b);
            b->path = path;
            b->line = lineno;
            snprintf(b->lab, sizeof b->lab, "%.2s", base);
            char extra[8] = "";
            const int got = sscanf(line, "%511[^\t]\t%159[^\t]\t%159[^\t]\t%31[^\t]\t%31[^\t]%7s",
                                   b->file, b->row, b->column, b->min, b->max, extra);
            ck_assert_msg(got == 5, "%s:%d: expected five tab-separated fields", path, lineno);
            char prefix[64];
            snprintf(prefix, sizeof prefix, "results/labs/%s/", b->lab);
            ck_assert_msg(strncmp(b->file, prefix, strlen(prefix)) == 0,
                          "%s:%d: %s is not a file of lab %s (under %s)", path, lineno, b->file,
                          b->lab, prefix);
            char *end1, *end2;
            const double lo = strtod(b->min, &end1), hi = strtod(b->max, &end2);
            ck_assert_msg(*end1 == '\0' && *end2 == '\0' && lo <= hi,
                          "%s:%d: min %s and max %s must be numbers, min <= max", path, lineno,
                          b->min, b->max);
        }
        free(text);
    }
    ck_assert_msg(n_bands > 0, "no band in docs/labs/keys/NN-*.bands.tsv");
}

/* Does the command write into the directory holding file (its --out is a prefix of it)? */
static int writes(const cmd *c, const char *file)
{
    const char *out = ho_flag_value(c, "--out");
    const size_t n = out ? strlen(out) : 0;
    return n > 0 && strncmp(file, out, n) == 0 && file[n] == '/';
}

/* Is c a command this test runs: the built program (not an edited copy), writing files
 * (not eval, which prints, nor bench, which measures time, except bench --layers, whose
 * tables also hold counts and gradients that no clock moves)? */
static int runs_here(const cmd *c)
{
    return c->is_attnlab && strcmp(c->argv[0], "build/attnlab") == 0 && c->argc >= 2 &&
           strcmp(c->argv[1], "eval") != 0 &&
           (strcmp(c->argv[1], "bench") != 0 || ho_has_flag(c, "--layers"));
}

/* The handout or key of a lab: the first file matching DIR/LAB-*.md, into path. */
static int lab_file(const char *dir, const char *lab, char *path)
{
    char pattern[PATH_LEN], found[1][PATH_LEN];
    snprintf(pattern, sizeof pattern, "%s/%s-*.md", dir, lab);
    if (ho_find_files(pattern, found, 1) != 1)
        return -1;
    memcpy(path, found[0], PATH_LEN);
    return 0;
}

START_TEST(bands_are_written_and_quoted)
{
    read_bands();
    for (size_t i = 0; i < n_bands; i++) {
        const band *b = &bands[i];
        char path[PATH_LEN];
        ck_assert_msg(lab_file("docs/labs", b->lab, path) == 0, "%s:%d: no handout of lab %s",
                      b->path, b->line, b->lab);
        static handout h;
        handout_read(&h, path);
        int written = 0;
        for (size_t k = 0; k < h.ncmds && !written; k++)
            written = runs_here(&h.cmds[k]) && writes(&h.cmds[k], b->file);
        handout_free(&h);
        ck_assert_msg(written, "%s:%d: no command of %s that runs the built program writes %s",
                      b->path, b->line, path, b->file);
        char quoted[80];
        if (strcmp(b->min, b->max) == 0)
            snprintf(quoted, sizeof quoted, "%s", b->min);
        else
            snprintf(quoted, sizeof quoted, "%s–%s", b->min, b->max);
        static const char *const keys[] = {"docs/labs/keys", "docs/zh/labs/keys"};
        for (size_t k = 0; k < 2; k++) {
            ck_assert_msg(lab_file(keys[k], b->lab, path) == 0, "no key of lab %s in %s",
                          b->lab, keys[k]);
            char *text = ho_read_file(path);
            ck_assert_ptr_nonnull(text);
            ck_assert_msg(strstr(text, quoted) != NULL,
                          "%s:%d: the band %s of %s (%s, %s) is not quoted in %s", b->path,
                          b->line, quoted, b->file, b->row, b->column, path);
            free(text);
        }
    }
}
END_TEST

/* ---- reading a value back ------------------------------------------------------------ */

/* Splits a line at tabs in place; returns the number of fields. */
static int split_tabs(char *line, char **f, int max)
{
    int n = 0;
    for (char *p = line; p && n < max; n++) {
        f[n] = p;
        p = strchr(p, '\t');
        if (p)
            *p++ = '\0';
    }
    return n;
}

/* The value the band names in its file (relocated under dir) into *v; 0 when found, or
 * -1 with why in err. */
static int band_value(const band *b, const char *dir, double *v, char *err, size_t n)
{
    char *path = ho_relocate(b->file, dir);
    char *text = ho_read_file(path);
    free(path);
    if (!text) {
        snprintf(err, n, "%s was not written", b->file);
        return -1;
    }
    enum { MAXF = 256 };
    char *head[MAXF], *f[MAXF];
    char *line = text, *next = strchr(line, '\n');
    if (next)
        *next++ = '\0';
    const int nh = split_tabs(line, head, MAXF);
    int want_r = 0, want_c = 0, col = -1, r = 0, rc = -1;
    const int matrix = b->row[0] == '#';
    if (matrix) {
        if (sscanf(b->row + 1, "%d,%d", &want_r, &want_c) != 2 || want_r < 1 || want_c < 1) {
            snprintf(err, n, "row %s: a matrix place is #ROW,COLUMN from 1", b->row);
            free(text);
            return -1;
        }
        col = want_c;
    } else {
        for (int k = 0; k < nh; k++)
            if (strcmp(head[k], b->column) == 0)
                col = k;
        if (col < 0) {
            snprintf(err, n, "%s has no column %s", b->file, b->column);
            free(text);
            return -1;
        }
    }
    for (line = next; line && *line && rc != 0; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        const int nf = split_tabs(line, f, MAXF);
        r++;
        int match = 1;
        if (matrix) {
            match = r == want_r;
        } else {
            /* every NAME=VALUE of the row must hold */
            char sel[FIELD_LEN];
            snprintf(sel, sizeof sel, "%s", b->row);
            for (char *s = strtok(sel, ","); s && match; s = strtok(NULL, ",")) {
                char *eq = strchr(s, '=');
                int hit = 0;
                for (int k = 0; eq && k < nh && k < nf; k++)
                    hit |= strncmp(head[k], s, (size_t)(eq - s)) == 0 &&
                           head[k][eq - s] == '\0' && strcmp(f[k], eq + 1) == 0;
                match = hit;
            }
        }
        if (match && col < nf) {
            char *end;
            *v = strtod(f[col], &end);
            rc = end != f[col] ? 0 : -1;
        }
    }
    if (rc != 0)
        snprintf(err, n, "%s has no row %s with a number in %s", b->file, b->row, b->column);
    free(text);
    return rc;
}

/* The number of decimals written in s. */
static int decimals(const char *s)
{
    const char *dot = strchr(s, '.');
    return dot ? (int)strlen(dot + 1) : 0;
}

/* ---- running a lab ---------------------------------------------------------------------- */

/* Is c a training run too long for the default check? */
static int long_train(const cmd *c)
{
    if (c->argc < 2 || strcmp(c->argv[1], "train") != 0)
        return 0;
    const char *steps = ho_flag_value(c, "--steps");
    return getenv("ATTNLAB_KEYS_ALL") == NULL && (!steps || atol(steps) > KEYS_SHORT_STEPS);
}

/* Does any word of c name a directory in skipped (a '\n'-separated list)? */
static int reads_skipped(const cmd *c, const char *skipped)
{
    for (int k = 2; k < c->argc; k++)
        for (const char *s = skipped; s && *s;) {
            const char *nl = strchr(s, '\n');
            const size_t len = nl ? (size_t)(nl - s) : strlen(s);
            if (len > 0 && strncmp(c->argv[k], s, len) == 0 &&
                (c->argv[k][len] == '\0' || c->argv[k][len] == '/'))
                return 1;
            s = nl ? nl + 1 : s + len;
        }
    return 0;
}

/* Can this machine run the Haswell kernel? (The program says which kernel it uses.) */
static int haswell_here(void)
{
    char log[] = "/tmp/attnlab-keys-version-XXXXXX";
    const int fd = mkstemp(log);
    ck_assert(fd >= 0);
    close(fd);
    char prog[PATH_LEN];
    static char version[] = "--version";
    snprintf(prog, sizeof prog, "%s", ho_program());
    char *argv[] = {prog, version, NULL};
    const int st = ho_run_argv(argv, 0, log);
    char *text = ho_read_file(log);
    unlink(log);
    const int yes = st == 0 && text && strstr(text, "kernel:   Haswell") != NULL;
    free(text);
    return yes;
}

static char handouts[32][PATH_LEN];
static size_t n_handouts;

/* Runs the commands of handout _i that write what its bands read, then checks every band
 * whose file was made. */
START_TEST(bands_hold_for_this_build)
{
    read_bands();
    char lab[8];
    const char *name = strrchr(handouts[_i], '/');
    snprintf(lab, sizeof lab, "%.2s", name ? name + 1 : handouts[_i]);
    size_t mine = 0;
    for (size_t i = 0; i < n_bands; i++)
        mine += strcmp(bands[i].lab, lab) == 0;
    if (mine == 0)
        return;
    setenv("OPENBLAS_CORETYPE", "Haswell", 1);
    if (!haswell_here()) {
        fprintf(stderr, "keys: this machine does not run the OpenBLAS kernel Haswell; the "
                        "bands of lab %s are not checked\n", lab);
        return;
    }
    char dir[] = "/tmp/attnlab-keys-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static handout h;
    handout_read(&h, handouts[_i]);
    char *skipped = NULL;
    for (size_t k = 0; k < h.ncmds; k++) {
        const cmd *c = &h.cmds[k];
        if (!runs_here(c))
            continue;
        if (long_train(c) || reads_skipped(c, skipped)) {
            const char *out = ho_flag_value(c, "--out");
            if (out)
                ho_append_line(&skipped, out);
            continue;
        }
        argvec a = {0};
        char text[LINE_LEN], log[PATH_LEN + 16], tail[600];
        ho_cmd_text(c, text, sizeof text);
        snprintf(log, sizeof log, "%s/log.txt", dir);
        ho_build_args(&a, c, dir);
        if (strcmp(c->argv[1], "bench") == 0) {
            /* one repetition on one thread: the banded columns are the same at any */
            av_push(&a, "--reps");
            av_push(&a, "1");
            av_push(&a, "--threads");
            av_push(&a, "1");
        }
        const int st = ho_run_argv(a.v, 0, log);
        ho_log_tail(log, tail, sizeof tail);
        ck_assert_msg(st == 0, "%s:%d: status %d for: %s\n%s", h.path, c->line, st, text,
                      tail);
        av_free(&a);
    }
    size_t checked = 0;
    for (size_t i = 0; i < n_bands; i++) {
        const band *b = &bands[i];
        if (strcmp(b->lab, lab) != 0)
            continue;
        int made = 0;
        for (size_t k = 0; k < h.ncmds && !made; k++)
            made = runs_here(&h.cmds[k]) && writes(&h.cmds[k], b->file) &&
                   !reads_skipped(&h.cmds[k], skipped) && !long_train(&h.cmds[k]);
        if (!made)
            continue;
        double v;
        char err[PATH_LEN + 128];
        ck_assert_msg(band_value(b, dir, &v, err, sizeof err) == 0, "%s:%d: %s", b->path,
                      b->line, err);
        /* a band written with an exponent is a %g column of the program's tables, six
         * significant digits, and is compared as written so (labkeys.sh writes it so) */
        double r;
        if (strpbrk(b->min, "eE") || strpbrk(b->max, "eE")) {
            char g[32];
            snprintf(g, sizeof g, "%.6g", v);
            r = strtod(g, NULL);
        } else {
            const double scale = pow(10.0, decimals(b->min) > decimals(b->max)
                                               ? decimals(b->min)
                                               : decimals(b->max));
            r = round(v * scale) / scale;
        }
        ck_assert_msg(r >= strtod(b->min, NULL) && r <= strtod(b->max, NULL),
                      "%s:%d: %s (%s, %s) is %g here, outside the band %s–%s the keys quote",
                      b->path, b->line, b->file, b->row, b->column, v, b->min, b->max);
        checked++;
    }
    handout_free(&h);
    free(skipped);
    if (checked == 0)
        fprintf(stderr, "keys: lab %s: no band from a short run (ATTNLAB_KEYS_ALL=1 checks "
                        "them all)\n", lab);
    char rm[sizeof dir + 16];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(rm), 0);
}
END_TEST

Suite *make_keys_suite(void)
{
    n_handouts = ho_find_files("docs/labs/[0-9][0-9]-*.md", handouts, 32);
    Suite *s = suite_create("keys");
    TCase *tc = tcase_create("static");
    tcase_add_test(tc, bands_are_written_and_quoted);
    suite_add_tcase(s, tc);
    tc = tcase_create("runs");
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, 3600);
    tcase_add_loop_test(tc, bands_hold_for_this_build, 0, (int)(n_handouts ? n_handouts : 1));
    suite_add_tcase(s, tc);
    return s;
}
