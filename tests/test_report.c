/* test_report.c — `attnlab report` on run directories and paths that are not to be
 * trusted: nothing in them runs, impossible values are refused by name, nothing is
 * silently cut off, and a figure is replaced only by a complete one.
 *
 * tests/fixtures/run/ is a run directory written by `attnlab train` (the smoke preset:
 * lstm, copy, seed 1, 40 steps), trimmed to the lengths 2 to 8. Each case copies it,
 * changes one value of one file (an edit), and runs the program ($ATTNLAB) as a user
 * would, in a child process, reading what it printed. Cases that need no figure point
 * ATTNLAB_PLOTS at a folder that does not exist, so report writes its tables and says
 * the figure scripts were not found; cases about figures need gnuplot and are left out
 * without it.
 *
 * "Nothing runs" is checked the only way it can be: every payload is a command that
 * would create a file in an empty folder of the test's own, and that folder must stay
 * empty. */
#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

enum { PATH_LEN = 4096, TEXT_LEN = 1 << 20 };

/* snprintf that fails the test rather than cut a path short. */
static void fmt(char *buf, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *buf, size_t n, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int w = vsnprintf(buf, n, f, ap);
    va_end(ap);
    ck_assert_msg(w >= 0 && (size_t)w < n, "%zu bytes are too few for \"%s\"", n, f);
}

static const char *src_root(void)
{
    const char *s = getenv("ATTNLAB_SRC");
    return s && *s ? s : ".";
}

/* ---- files ----------------------------------------------------------------------------- */

/* Reads a whole file (NUL-terminated; free it); NULL when it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(TEXT_LEN + 1);
    ck_assert_ptr_nonnull(buf);
    size_t n = fread(buf, 1, TEXT_LEN, f);
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static void spit(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert(fwrite(text, 1, len, f) == len);
    ck_assert(fclose(f) == 0);
}

static void mkdir_p(const char *dir)
{
    char cmd[PATH_LEN + 32];
    fmt(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

static void remove_tree(const char *dir)
{
    char cmd[PATH_LEN + 32];
    fmt(cmd, sizeof cmd, "rm -rf '%s'", dir);
    (void)system(cmd);
}

/* A fresh directory /tmp/attnlab-report-XXXXXX, written into dir. */
static void fresh_dir(char *dir, size_t n)
{
    fmt(dir, n, "/tmp/attnlab-report-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* The number of entries of dir (without . and ..), -1 when it cannot be read. */
static long count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* ---- run directories made from the fixture -------------------------------------------- */

static const char *const run_files[] = {"config.tsv",   "build.tsv",          "train_log.tsv",
                                        "eval.tsv",     "eval_positions.tsv", "cost.tsv"};
enum { N_RUN_FILES = sizeof run_files / sizeof run_files[0] };

/* One change to one file of a run. */
typedef enum {
    SET, /* field := value: in row `row` (from 1) of a table, or on the line of key field
            of a key/value file (row 0) */
    DUP, /* a second copy of row `row` at the end */
    CUT, /* every row removed, the header kept */
    ADD, /* the line `value` added at the end */
    DEL, /* the file removed */
} edit_op;

typedef struct edit {
    const char *file;
    edit_op op;
    const char *field;
    size_t row;
    const char *value;
} edit;

/* Applies e to text (a file of the fixture) and returns the new text (free it). */
static char *apply(const char *text, const edit *e)
{
    char *out = malloc(strlen(text) + (e->value ? strlen(e->value) : 0) + 4096);
    ck_assert_ptr_nonnull(out);
    out[0] = '\0';
    const char *dup_line = NULL;
    size_t dup_len = 0, line = 0;
    long col = -1;
    for (const char *p = text; *p; line++) {
        const char *start = p;
        size_t l = strcspn(p, "\n");
        char cur[8192];
        ck_assert(l < sizeof cur);
        memcpy(cur, p, l);
        cur[l] = '\0';
        p += l + (p[l] == '\n');
        if (line == 0 && e->op == SET && e->row > 0) { /* find the column */
            char hdr[8192];
            fmt(hdr, sizeof hdr, "%s", cur);
            long k = 0;
            for (char *c = strtok(hdr, "\t"); c; c = strtok(NULL, "\t"), k++)
                if (strcmp(c, e->field) == 0)
                    col = k;
            ck_assert_msg(col >= 0, "%s has no column %s", e->file, e->field);
        }
        if (line > 0 && e->op == CUT)
            continue;
        if (line > 0 && e->op == DUP && line == e->row) {
            dup_line = start;
            dup_len = l;
        }
        int replace = 0;
        if (e->op == SET && e->row == 0 && line > 0) {
            size_t key = strcspn(cur, "\t");
            replace = key == strlen(e->field) && strncmp(cur, e->field, key) == 0;
            if (replace) {
                strcat(out, e->field);
                strcat(out, "\t");
                strcat(out, e->value);
                strcat(out, "\n");
                continue;
            }
        }
        if (e->op == SET && e->row > 0 && line == e->row) {
            long k = 0;
            const char *c = cur;
            for (;; k++) {
                size_t cl = strcspn(c, "\t");
                if (k)
                    strcat(out, "\t");
                if (k == col)
                    strcat(out, e->value);
                else
                    strncat(out, c, cl);
                if (!c[cl])
                    break;
                c += cl + 1;
            }
            strcat(out, "\n");
            continue;
        }
        strcat(out, cur);
        strcat(out, "\n");
    }
    if (e->op == DUP) {
        ck_assert_msg(dup_line != NULL, "%s has no row %zu", e->file, e->row);
        strncat(out, dup_line, dup_len);
        strcat(out, "\n");
    }
    if (e->op == ADD) {
        strcat(out, e->value);
        strcat(out, "\n");
    }
    return out;
}

/* Makes dir a copy of the fixture run with the ne edits applied (each to its file). */
static void make_run(const char *dir, const edit *edits, size_t ne)
{
    mkdir_p(dir);
    for (size_t i = 0; i < N_RUN_FILES; i++) {
        char from[PATH_LEN], to[PATH_LEN];
        fmt(from, sizeof from, "%s/tests/fixtures/run/%s", src_root(), run_files[i]);
        fmt(to, sizeof to, "%s/%s", dir, run_files[i]);
        size_t len;
        char *text = slurp(from, &len);
        ck_assert_msg(text != NULL, "no fixture %s", from);
        int deleted = 0;
        for (size_t k = 0; k < ne; k++) {
            if (strcmp(edits[k].file, run_files[i]) != 0)
                continue;
            if (edits[k].op == DEL) {
                deleted = 1;
                continue;
            }
            char *next = apply(text, &edits[k]);
            free(text);
            text = next;
        }
        if (!deleted)
            spit(to, text, strlen(text));
        free(text);
    }
}

/* A run with one SET edit (and its seed), written as runs/NAME under base. */
static void make_run1(const char *base, const char *name, const edit *e)
{
    char dir[PATH_LEN];
    fmt(dir, sizeof dir, "%s/runs/%s", base, name);
    make_run(dir, e, e ? 1 : 0);
}

/* ---- running the program --------------------------------------------------------------- */

typedef struct result {
    int status; /* exit status, or -1 for a signal */
    char *out, *err;
} result;

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

/* Runs the program with args (NULL-terminated, without argv[0]). plots: NULL leaves
 * ATTNLAB_PLOTS as it is, else sets it. fsize > 0 limits the size of every file the
 * program (and gnuplot) writes, SIGXFSZ ignored: writes beyond it fail as on a full disk. */
static void run(result *r, const char *const *args, const char *plots, rlim_t fsize)
{
    char outp[] = "/tmp/attnlab-report-out-XXXXXX", errp[] = "/tmp/attnlab-report-err-XXXXXX";
    int fo = mkstemp(outp), fe = mkstemp(errp);
    ck_assert(fo >= 0 && fe >= 0);
    static char prog[PATH_MAX];
    ck_assert_msg(realpath(tu_program(), prog) != NULL, "no program %s", tu_program());
    fflush(NULL);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        dup2(fo, 1);
        dup2(fe, 2);
        if (plots)
            setenv("ATTNLAB_PLOTS", plots, 1);
        if (fsize > 0) {
            struct rlimit lim = {fsize, fsize};
            signal(SIGXFSZ, SIG_IGN);
            if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
                _exit(126);
        }
        char *argv[256];
        size_t k = 0;
        argv[k++] = prog;
        for (; args[k - 1] && k < 255; k++)
            argv[k] = strdup(args[k - 1]);
        argv[k] = NULL;
        execv(prog, argv);
        _exit(127);
    }
    int st;
    ck_assert(waitpid(pid, &st, 0) == pid);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r->out = slurp(outp, NULL);
    r->err = slurp(errp, NULL);
    ck_assert(r->out && r->err);
    close(fo);
    close(fe);
    unlink(outp);
    unlink(errp);
}

/* The line of text that contains what, copied into buf ("" when none). */
static const char *line_with(const char *text, const char *what, char *buf, size_t n)
{
    const char *hit = strstr(text, what);
    buf[0] = '\0';
    if (!hit)
        return buf;
    const char *start = hit;
    while (start > text && start[-1] != '\n')
        start--;
    size_t l = strcspn(start, "\n");
    fmt(buf, n, "%.*s", (int)l, start);
    return buf;
}

/* Is gnuplot on the PATH? */
static int have_gnuplot(void)
{
    return system("command -v gnuplot > /dev/null 2>&1") == 0;
}

#define NO_PLOTS "/nonexistent/attnlab-plots"

/* ---- impossible values are refused by name ---------------------------------------------- */

/* A run made impossible by one edit, and what the line that skips it must say. */
typedef struct bad_case {
    const char *name;
    edit e;
    const char *says[3];
} bad_case;

static const bad_case bad_cases[] = {
    {"a-tok5", {"eval.tsv", SET, "token_acc", 1, "5.0"},
     {"eval.tsv line 2, field token_acc", "'5.0' is out of range", "[0, 1]"}},
    {"a-tokneg", {"eval.tsv", SET, "token_acc", 2, "-1"},
     {"eval.tsv line 3, field token_acc", "'-1' is out of range", NULL}},
    {"a-seqnan", {"eval.tsv", SET, "seq_acc", 1, "nan"},
     {"eval.tsv line 2, field seq_acc", "not a number", NULL}},
    {"b-lenneg", {"eval.tsv", SET, "len", 1, "-4"},
     {"eval.tsv line 2, field len", "'-4' is not a whole number", "max_len"}},
    {"b-lenhuge", {"eval.tsv", SET, "len", 1, "1e300"},
     {"eval.tsv line 2, field len", "'1e300' is not a whole number", NULL}},
    {"b-lenbeyond", {"eval.tsv", SET, "len", 1, "257"},
     {"eval.tsv line 2, field len", "out of range", "[1, 256]"}},
    {"c-evaldup", {"eval.tsv", DUP, NULL, 2, NULL}, {"eval.tsv: lines 3 and 6", "same len", NULL}},
    {"c-evalempty", {"eval.tsv", CUT, NULL, 0, NULL}, {"eval.tsv has no rows", NULL, NULL}},
    {"c-evalmodel", {"eval.tsv", SET, "model", 1, "transformer"},
     {"eval.tsv line 2, field model", "not the run's model", NULL}},
    {"c-noeval", {"eval.tsv", DEL, NULL, 0, NULL}, {"eval.tsv", NULL, NULL}},
    {"d-cfgmodel", {"config.tsv", SET, "model", 0, "gpt"},
     {"config.tsv", "model 'gpt' is not a model of this build", "lstm"}},
    {"d-cfgtask", {"config.tsv", SET, "task", 0, "sort"},
     {"config.tsv", "task 'sort' is not a task of this build", NULL}},
    {"d-cfgdup", {"config.tsv", ADD, NULL, 0, "seed\t7"}, {"config.tsv", "both set seed", NULL}},
    {"d-cfgrange", {"config.tsv", SET, "train_max", 0, "300"}, {"config.tsv", "--train-len", NULL}},
    {"e-pos", {"eval_positions.tsv", SET, "position", 1, "99"},
     {"eval_positions.tsv line 2, field position", "out of range", NULL}},
    {"e-posacc", {"eval_positions.tsv", SET, "accuracy", 1, "1.5"},
     {"eval_positions.tsv line 2, field accuracy", "out of range", NULL}},
    {"e-poslen", {"eval_positions.tsv", SET, "len", 1, "10"},
     {"eval_positions.tsv line 2, field len", "not a length of eval.tsv", NULL}},
    {"e-posdup", {"eval_positions.tsv", DUP, NULL, 1, NULL},
     {"eval_positions.tsv: lines 2 and", "same len and position", NULL}},
    {"f-logacc", {"train_log.tsv", SET, "token_acc", 1, "2"},
     {"train_log.tsv line 2, field token_acc", "out of range", NULL}},
    {"f-logstep", {"train_log.tsv", SET, "step", 1, "1000"},
     {"train_log.tsv line 2, field step", "the run's steps", NULL}},
    {"f-logloss", {"train_log.tsv", SET, "loss", 1, "-1"},
     {"train_log.tsv line 2, field loss", "out of range", NULL}},
    {"f-logdup", {"train_log.tsv", DUP, NULL, 1, NULL}, {"train_log.tsv: lines 2 and 3", NULL, NULL}},
    {"g-costlen", {"cost.tsv", SET, "len", 1, "0"}, {"cost.tsv line 2, field len", NULL, NULL}},
    {"g-costms", {"cost.tsv", SET, "train_ms_per_seq", 1, "-3"},
     {"cost.tsv line 2, field train_ms_per_seq", NULL, NULL}},
    {"h-params", {"build.tsv", SET, "parameters", 0, "many"},
     {"build.tsv line 8, field parameters", "not a whole number", NULL}},
    {"h-secs", {"build.tsv", SET, "train_seconds", 0, "-1"},
     {"build.tsv line 10, field train_seconds", "out of range", NULL}},
};
enum { N_BAD = sizeof bad_cases / sizeof bad_cases[0] };

/* Counts the lines of text that contain what. */
static size_t count_lines_with(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

START_TEST(impossible_values_are_refused_by_name)
{
    char base[PATH_LEN], line[2048];
    fresh_dir(base, sizeof base);
    const edit seed2 = {"config.tsv", SET, "seed", 0, "2"};
    make_run1(base, "good-1", NULL);
    make_run1(base, "good-2", &seed2);
    for (size_t i = 0; i < N_BAD; i++)
        make_run1(base, bad_cases[i].name, &bad_cases[i].e);
    result r;
    run(&r, (const char *const[]){"report", base, NULL}, NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    /* one line for each run that adds nothing, naming the file, the line and the field */
    ck_assert_uint_eq(count_lines_with(r.err, "attnlab report: skipping "), N_BAD);
    for (size_t i = 0; i < N_BAD; i++) {
        char who[PATH_LEN + 64];
        fmt(who, sizeof who, "skipping %s/runs/%s: ", base, bad_cases[i].name);
        line_with(r.err, who, line, sizeof line);
        ck_assert_msg(line[0], "%s is not listed as skipped:\n%s", bad_cases[i].name, r.err);
        for (size_t k = 0; k < 3 && bad_cases[i].says[k]; k++)
            ck_assert_msg(strstr(line, bad_cases[i].says[k]), "%s: no \"%s\" in: %s",
                          bad_cases[i].name, bad_cases[i].says[k], line);
    }
    /* the two good runs are the only seeds */
    char path[PATH_LEN];
    fmt(path, sizeof path, "%s/accuracy.tsv", base);
    char *acc = slurp(path, NULL);
    ck_assert_ptr_nonnull(acc);
    ck_assert_msg(strstr(acc, "\nlstm\t166987\t2\t2\t") != NULL, "accuracy.tsv:\n%s", acc);
    ck_assert_msg(strstr(acc, "5.0") == NULL && count_lines_with(acc, "\nlstm\t") == 4,
                  "accuracy.tsv:\n%s", acc);
    free(acc);
    result_free(&r);
    remove_tree(base);
}
END_TEST

/* ---- no silent limits ------------------------------------------------------------------- */

START_TEST(many_runs_and_groups_are_all_reported)
{
    char base[PATH_LEN], dir[PATH_LEN + 32], value[32], path[PATH_LEN];
    fresh_dir(base, sizeof base);
    /* 300 seeds of one setup */
    for (int s = 1; s <= 300; s++) {
        fmt(value, sizeof value, "%d", s);
        fmt(dir, sizeof dir, "%s/a/runs/s%03d", base, s);
        const edit e = {"config.tsv", SET, "seed", 0, value};
        make_run(dir, &e, 1);
    }
    fmt(dir, sizeof dir, "%s/a", base);
    result r;
    run(&r, (const char *const[]){"report", dir, NULL}, NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    fmt(path, sizeof path, "%s/a/accuracy.tsv", base);
    char *text = slurp(path, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "\nlstm\t166987\t2\t300\t"), "accuracy.tsv:\n%.400s", text);
    free(text);
    fmt(path, sizeof path, "%s/a/figure_vars.gp", base);
    text = slurp(path, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "seeds = 300\n"), "figure_vars.gp:\n%s", text);
    free(text);
    result_free(&r);

    /* 20 setups, one run each: 20 groups */
    for (int h = 0; h < 20; h++) {
        fmt(value, sizeof value, "%d", 100 + h);
        fmt(dir, sizeof dir, "%s/b/runs/h%02d", base, h);
        const edit e = {"config.tsv", SET, "hidden", 0, value};
        make_run(dir, &e, 1);
    }
    fmt(dir, sizeof dir, "%s/b", base);
    run(&r, (const char *const[]){"report", dir, NULL}, NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    fmt(path, sizeof path, "%s/b/summary.tsv", base);
    text = slurp(path, NULL);
    ck_assert_ptr_nonnull(text);
    /* each group has a line per selected length; count the groups at the shortest */
    size_t groups = 0;
    for (const char *p = strchr(text, '\n'); p && p[1]; p = strchr(p + 1, '\n'))
        groups += strncmp(p + 1, "lstm", 4) == 0 && strstr(p + 1, "\t2\t") &&
                  strstr(p + 1, "\t2\t") < strchr(p + 1, '\n');
    ck_assert_msg(groups == 20, "%zu groups in summary.tsv:\n%s", groups, text);
    for (int h = 1; h < 20; h++) {
        char name[64];
        fmt(name, sizeof name, "\nlstm:hidden=%d\t", 100 + h);
        ck_assert_msg(strstr(text, name), "no group %s in summary.tsv", name + 1);
    }
    free(text);
    result_free(&r);

    /* more run directories than one report merges: refused, naming the limit */
    fmt(dir, sizeof dir, "%s/c", base);
    char cmd[2 * PATH_LEN];
    fmt(cmd, sizeof cmd, "cd '%s' && mkdir -p runs && cd runs && for i in $(seq 1 4096); do "
        "mkdir r$i && : > r$i/config.tsv || exit 1; done", dir);
    mkdir_p(dir);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
    run(&r, (const char *const[]){"report", dir, NULL}, NO_PLOTS, 0);
    ck_assert_msg(r.status == 1 && strstr(r.err, "4096 run directories or more; one report "
                                                 "merges at most 4095"),
                  "status %d: %.300s", r.status, r.err);
    result_free(&r);
    remove_tree(base);
}
END_TEST

/* ---- nothing read or typed reaches gnuplot as code ------------------------------------- */

/* Commands, each in a form some reader could run: gnuplot's single and double quotes,
 * the shell's $() and backquotes, a newline, bytes that are not UTF-8. @ stands for the
 * file they would create (fill). */
static const char *const payloads[] = {
    "x';y=system('touch @');b='",
    "x\";system(\"touch @\");\"",
    "$(touch @)",
    "`touch @`",
    /* without a space, so that a setting's name check lets them pass */
    "x\";system(\"touch${IFS}@\");\"",
    "`touch${IFS}@`",
    "a\nb`touch @`",
    "\xff\xfe`touch @`",
};
enum {
    N_PAYLOADS = sizeof payloads / sizeof payloads[0],
    TEXT_PAYLOADS = 6, /* the ones before are text on one line */
    P_NEWLINE = 6,
    P_BYTES = 7,
};

/* A field of a run directory, and whether it is free text (build facts nothing reads:
 * any text is kept, only a broken line or a byte that is not text is refused). */
static const struct field_case {
    const char *file, *field;
    size_t row; /* 0: the key of a key/value file */
    int free_text;
} field_cases[] = {
    {"config.tsv", "model", 0, 0},        {"config.tsv", "task", 0, 0},
    {"config.tsv", "cell", 0, 0},         {"config.tsv", "pos", 0, 0},
    {"config.tsv", "seed", 0, 0},         {"config.tsv", "lr", 0, 0},
    {"build.tsv", "parameters", 0, 0},    {"build.tsv", "train_seconds", 0, 0},
    {"build.tsv", "compiler", 0, 1},      {"build.tsv", "blas", 0, 1},
    {"train_log.tsv", "step", 1, 0},      {"train_log.tsv", "loss", 1, 0},
    {"train_log.tsv", "token_acc", 1, 0}, {"train_log.tsv", "lr", 1, 0},
    {"eval.tsv", "model", 1, 0},          {"eval.tsv", "len", 1, 0},
    {"eval.tsv", "samples", 1, 0},        {"eval.tsv", "token_acc", 1, 0},
    {"eval.tsv", "loss", 1, 0},           {"eval_positions.tsv", "model", 1, 0},
    {"eval_positions.tsv", "len", 1, 0},  {"eval_positions.tsv", "position", 1, 0},
    {"eval_positions.tsv", "accuracy", 1, 0}, {"cost.tsv", "model", 1, 0},
    {"cost.tsv", "len", 1, 0},            {"cost.tsv", "flops_per_seq", 1, 0},
};
enum { N_FIELDS = sizeof field_cases / sizeof field_cases[0] };

/* Writes payload into buf with @ replaced by pwn/NUMBER. */
static void fill(char *buf, size_t n, const char *payload, const char *pwn, size_t number)
{
    const char *at = strchr(payload, '@');
    ck_assert_ptr_nonnull(at);
    fmt(buf, n, "%.*s%s/%zu%s", (int)(at - payload), payload, pwn, number, at + 1);
}

/* Fails unless the folder pwn is still empty. */
static void assert_nothing_ran(const char *pwn, const char *what)
{
    long n = count_entries(pwn);
    ck_assert_msg(n == 0, "%s: %ld file(s) appeared in %s: a payload ran", what, n, pwn);
}

START_TEST(no_field_of_a_run_reaches_gnuplot_as_code)
{
    char base[PATH_LEN], pwn[PATH_LEN + 8], line[4096], path[PATH_LEN + 64];
    fresh_dir(base, sizeof base);
    fmt(pwn, sizeof pwn, "%s/pwn", base);
    mkdir_p(pwn);
    make_run1(base, "good", NULL);
    static char value[N_FIELDS][N_PAYLOADS][PATH_LEN];
    for (size_t f = 0; f < N_FIELDS; f++)
        for (size_t p = 0; p < N_PAYLOADS; p++) {
            char name[32];
            fmt(name, sizeof name, "f%02zu-p%zu", f, p);
            fill(value[f][p], PATH_LEN, payloads[p], pwn, f * N_PAYLOADS + p);
            const edit e = {field_cases[f].file, SET, field_cases[f].field, field_cases[f].row,
                            value[f][p]};
            make_run1(base, name, &e);
        }
    /* the comparison's manifest, shown on the page */
    fmt(path, sizeof path, "%s/manifest.tsv", base);
    char manifest[4 * PATH_LEN];
    fmt(manifest, sizeof manifest, "key\tvalue\ncommand\t%s\nmodels\t%s\ntask\t%s\nseeds\t%s\n",
             value[0][0], value[0][1], value[0][2], value[0][3]);
    spit(path, manifest, strlen(manifest));
    result r;
    run(&r, (const char *const[]){"report", base, NULL}, NULL, 0);
    assert_nothing_ran(pwn, "report");
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    for (size_t f = 0; f < N_FIELDS; f++)
        for (size_t p = 0; p < N_PAYLOADS; p++) {
            char who[PATH_LEN + 64];
            fmt(who, sizeof who, "skipping %s/runs/f%02zu-p%zu: ", base, f, p);
            line_with(r.err, who, line, sizeof line);
            const int kept = field_cases[f].free_text && p < TEXT_PAYLOADS;
            if (kept) {
                ck_assert_msg(!line[0], "%s %s: text refused: %s", field_cases[f].file,
                              field_cases[f].field, line);
                continue;
            }
            ck_assert_msg(line[0], "%s %s, payload %zu: not skipped", field_cases[f].file,
                          field_cases[f].field, p);
            ck_assert_msg(strstr(line, field_cases[f].file), "no file named: %s", line);
            /* a newline breaks the line itself: then the line is named, not a field */
            if (p != P_NEWLINE)
                ck_assert_msg(strstr(line, field_cases[f].field), "no field named: %s", line);
        }
    /* the figures were drawn from the good run's values only */
    fmt(path, sizeof path, "%s/figure_vars.gp", base);
    char *vars = slurp(path, NULL);
    ck_assert_ptr_nonnull(vars);
    ck_assert_msg(strstr(vars, "models = \"lstm\"\n") && strstr(vars, "task = \"copy\"\n"),
                  "figure_vars.gp:\n%s", vars);
    free(vars);
    fmt(path, sizeof path, "%s/figures/accuracy.png", base);
    ck_assert_msg(access(path, F_OK) == 0, "no accuracy figure: %s", r.err);
    /* the manifest is on the page as text */
    fmt(path, sizeof path, "%s/report.html", base);
    char *html = slurp(path, NULL);
    ck_assert_ptr_nonnull(html);
    ck_assert_msg(strstr(html, "<h2>Manifest</h2>") && strstr(html, "x&quot;;system(&quot;"),
                  "the manifest is not on the page");
    free(html);
    result_free(&r);

    /* a manifest that is not text is left out, with a line saying so */
    fmt(manifest, sizeof manifest, "key\tvalue\ncommand\t%s\n", value[0][P_BYTES]);
    fmt(path, sizeof path, "%s/manifest.tsv", base);
    spit(path, manifest, strlen(manifest));
    run(&r, (const char *const[]){"report", base, NULL}, NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "report.html shows no manifest.tsv") &&
                      strstr(r.err, "line 2 holds a control character or a byte that is not "
                                    "UTF-8"),
                  "%s", r.err);
    assert_nothing_ran(pwn, "report");
    result_free(&r);
    remove_tree(base);
}
END_TEST

START_TEST(output_path_is_not_code)
{
    char base[PATH_LEN], pwn[PATH_LEN + 8], run_dir[PATH_LEN + 16];
    fresh_dir(base, sizeof base);
    fmt(pwn, sizeof pwn, "%s/pwn", base);
    mkdir_p(pwn);
    fmt(run_dir, sizeof run_dir, "%s/runs/good", base);
    make_run(run_dir, NULL, 0);
    /* every payload but the one that is only a newline, then that one, then bytes that
     * are not UTF-8, each the name of a folder in base */
    for (size_t i = 0; i < 3; i++) {
        char out[PATH_LEN], fig[PATH_LEN + 32], p[4][PATH_LEN];
        for (size_t k = 0; k < 4; k++)
            fill(p[k], sizeof p[k], payloads[i == 0 ? k : i == 1 ? P_NEWLINE : P_BYTES], pwn,
                 10 * i + k);
        if (i == 0)
            fmt(out, sizeof out, "%s/o %s%s%s%s", base, p[0], p[1], p[2], p[3]);
        else
            fmt(out, sizeof out, "%s/o%zu %s", base, i, p[0]);
        result r;
        run(&r, (const char *const[]){"report", "--out", out, run_dir, NULL}, NULL, 0);
        assert_nothing_ran(pwn, out);
        ck_assert_msg(r.status == 0, "--out %s: status %d: %s", out, r.status, r.err);
        fmt(fig, sizeof fig, "%s/figures/accuracy.svg", out);
        ck_assert_msg(access(fig, F_OK) == 0, "--out %s: no figure: %s", out, r.err);
        result_free(&r);
    }
    remove_tree(base);
}
END_TEST

START_TEST(compare_output_path_is_not_code)
{
    char base[PATH_LEN], pwn[PATH_LEN + 8], out[2 * PATH_LEN], fig[2 * PATH_LEN + 32];
    fresh_dir(base, sizeof base);
    fmt(pwn, sizeof pwn, "%s/pwn", base);
    mkdir_p(pwn);
    fmt(out, sizeof out, "%s/c x';y=system('touch %s/c1');b='`touch %s/c2`", base, pwn,
             pwn);
    result r;
    run(&r,
        (const char *const[]){"compare", "--preset", "smoke", "--models", "lstm", "--steps", "4",
                              "--eval-lengths", "2:4:2", "--samples", "4", "--jobs", "1",
                              "--out", out, NULL},
        NULL, 0);
    assert_nothing_ran(pwn, "compare");
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    fmt(fig, sizeof fig, "%s/figures/accuracy.svg", out);
    ck_assert_msg(access(fig, F_OK) == 0, "no figure: %s", r.err);
    result_free(&r);
    remove_tree(base);
}
END_TEST

/* ---- a figure is replaced only by a complete one ----------------------------------------- */

/* The figure files of dir/figures (names and bytes), to compare before and after. */
typedef struct snapshot {
    size_t n;
    char name[32][64];
    char *bytes[32];
    size_t len[32];
} snapshot;

static void take_snapshot(const char *dir, snapshot *s)
{
    char figs[PATH_LEN + 16];
    fmt(figs, sizeof figs, "%s/figures", dir);
    memset(s, 0, sizeof *s);
    DIR *d = opendir(figs);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        ck_assert(s->n < 32);
        char path[PATH_LEN + 96];
        fmt(s->name[s->n], 64, "%s", e->d_name);
        fmt(path, sizeof path, "%s/%s", figs, e->d_name);
        s->bytes[s->n] = slurp(path, &s->len[s->n]);
        ck_assert_ptr_nonnull(s->bytes[s->n]);
        s->n++;
    }
    closedir(d);
}

static void free_snapshot(snapshot *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->bytes[i]);
}

/* Fails unless dir/figures holds exactly the files of s, byte for byte. */
static void assert_same_figures(const char *dir, const snapshot *s)
{
    snapshot now;
    take_snapshot(dir, &now);
    ck_assert_msg(now.n == s->n, "%zu files in figures/, %zu before", now.n, s->n);
    for (size_t i = 0; i < s->n; i++) {
        size_t j = 0;
        while (j < now.n && strcmp(now.name[j], s->name[i]) != 0)
            j++;
        ck_assert_msg(j < now.n, "figures/%s is gone", s->name[i]);
        ck_assert_msg(now.len[j] == s->len[i] && memcmp(now.bytes[j], s->bytes[i], s->len[i]) == 0,
                      "figures/%s changed (%zu bytes, %zu before)", s->name[i], now.len[j],
                      s->len[i]);
    }
    free_snapshot(&now);
}

START_TEST(full_disk_keeps_the_figures)
{
    char base[PATH_LEN], out[PATH_LEN + 8], fresh[PATH_LEN + 8], run_dir[PATH_LEN + 16];
    fresh_dir(base, sizeof base);
    fmt(run_dir, sizeof run_dir, "%s/runs/good", base);
    make_run(run_dir, NULL, 0);
    fmt(out, sizeof out, "%s/out", base);
    result r;
    run(&r, (const char *const[]){"report", "--out", out, run_dir, NULL}, NULL, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    result_free(&r);
    snapshot before;
    take_snapshot(out, &before);
    ck_assert_msg(before.n >= 8, "only %zu figure files drawn", before.n);

    /* the same report on a disk that takes no file beyond 24 kB: the tables fit, the
     * figures do not */
    run(&r, (const char *const[]){"report", "--out", out, run_dir, NULL}, NULL, 24 << 10);
    ck_assert_msg(r.status == 1, "status %d on a full disk: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "figure accuracy was not drawn") ||
                      strstr(r.err, "plots/accuracy.gp "),
                  "the failed figure is not named: %s", r.err);
    ck_assert_msg(!strstr(r.out, "wrote"), "says it wrote a figure: %s", r.out);
    assert_same_figures(out, &before);
    result_free(&r);
    free_snapshot(&before);

    /* and into a new directory: no figure at all rather than a broken one */
    fmt(fresh, sizeof fresh, "%s/new", base);
    run(&r, (const char *const[]){"report", "--out", fresh, run_dir, NULL}, NULL, 24 << 10);
    ck_assert_msg(r.status == 1, "status %d on a full disk: %s", r.status, r.err);
    snapshot none;
    take_snapshot(fresh, &none);
    ck_assert_msg(none.n == 0, "%zu figure files on a full disk, e.g. %s", none.n,
                  none.n ? none.name[0] : "");
    free_snapshot(&none);
    result_free(&r);
    remove_tree(base);
}
END_TEST

/* A copy of plots/ in dir/plots where script writes the given text instead. */
static void plots_with(const char *dir, const char *script, const char *text)
{
    char cmd[3 * PATH_LEN], path[PATH_LEN + 64];
    fmt(cmd, sizeof cmd, "mkdir -p '%s/plots' && cp '%s'/plots/*.gp '%s/plots/'", dir,
             src_root(), dir);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
    fmt(path, sizeof path, "%s/plots/%s.gp", dir, script);
    spit(path, text, strlen(text));
}

START_TEST(incomplete_or_failed_figures_are_errors)
{
    char base[PATH_LEN], out[PATH_LEN + 8], plots[PATH_LEN + 8], run_dir[PATH_LEN + 16];
    char path[PATH_LEN + 64];
    fresh_dir(base, sizeof base);
    fmt(run_dir, sizeof run_dir, "%s/runs/good", base);
    make_run(run_dir, NULL, 0);
    fmt(out, sizeof out, "%s/out", base);
    fmt(plots, sizeof plots, "%s/plots", base);
    /* curves.gp succeeds but leaves a PNG cut short and an SVG without its end */
    plots_with(base, "curves",
               "set print figs.\"/curves.png\"\nprint \"\\x89PNG\"\n"
               "set print figs.\"/curves.svg\"\nprint \"<svg>\"\nunset print\n");
    result r;
    run(&r, (const char *const[]){"report", "--out", out, run_dir, NULL}, plots, 0);
    ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "figure curves was not drawn: the PNG does not end with its "
                                "IEND chunk"), "%s", r.err);
    fmt(path, sizeof path, "%s/figures/curves.png", out);
    ck_assert_msg(access(path, F_OK) != 0, "the broken figure was moved into place");
    fmt(path, sizeof path, "%s/figures/accuracy.png", out);
    ck_assert_msg(access(path, F_OK) == 0, "the other figures were not drawn: %s", r.err);
    fmt(path, sizeof path, "%s/report.html", out);
    char *html = slurp(path, NULL);
    ck_assert_ptr_nonnull(html);
    ck_assert_msg(!strstr(html, "Training loss and teacher-forced"), "the page shows curves");
    ck_assert_msg(strstr(html, "Token and whole-sequence accuracy"), "the page lacks accuracy");
    free(html);
    result_free(&r);

    /* gates.gp fails: one line names it, status 1 */
    plots_with(base, "gates", "exit status 3\n");
    run(&r, (const char *const[]){"report", "--out", out, run_dir, NULL}, plots, 0);
    ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.err);
    ck_assert_msg(count_lines_with(r.err, "plots/gates.gp exited with status 3") == 1, "%s",
                  r.err);
    result_free(&r);
    remove_tree(base);
}
END_TEST

START_TEST(page_shows_only_the_figures_drawn)
{
    char base[PATH_LEN], out[PATH_LEN + 8], a[PATH_LEN + 16], b[PATH_LEN + 16];
    char cmd[3 * PATH_LEN], path[PATH_LEN + 64];
    fresh_dir(base, sizeof base);
    /* run a: measured its cost and was traced; run b: neither */
    fmt(a, sizeof a, "%s/runs/a", base);
    make_run(a, NULL, 0);
    fmt(cmd, sizeof cmd, "mkdir -p '%s/trace' && cp '%s'/tests/fixtures/compare/trace/lstm/*.tsv "
             "'%s/trace/'", a, src_root(), a);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
    fmt(b, sizeof b, "%s/runs/b", base);
    const edit no_cost = {"cost.tsv", DEL, NULL, 0, NULL};
    make_run(b, &no_cost, 1);
    fmt(out, sizeof out, "%s/out", base);
    result r;
    run(&r, (const char *const[]){"report", "--out", out, a, NULL}, NULL, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    result_free(&r);
    fmt(path, sizeof path, "%s/report.html", out);
    char *html = slurp(path, NULL);
    ck_assert_ptr_nonnull(html);
    ck_assert_msg(strstr(html, "Cost against length") && strstr(html, "LSTM gate activations"),
                  "the first page lacks the cost and gates figures");
    free(html);

    run(&r, (const char *const[]){"report", "--out", out, b, NULL}, NULL, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    html = slurp(path, NULL);
    ck_assert_ptr_nonnull(html);
    ck_assert_msg(!strstr(html, "Cost against length"), "the page shows an old cost figure");
    ck_assert_msg(!strstr(html, "LSTM gate activations"), "the page shows old gates");
    ck_assert_msg(strstr(html, "Token and whole-sequence accuracy"), "the page lacks accuracy");
    free(html);
    /* the old trace copy is gone, so no figure is drawn from it; old figures stay */
    fmt(path, sizeof path, "%s/trace/lstm", out);
    ck_assert_msg(access(path, F_OK) != 0, "the old trace copy is still in %s", path);
    fmt(path, sizeof path, "%s/figures/cost.png", out);
    ck_assert_msg(access(path, F_OK) == 0, "an earlier figure was deleted");
    result_free(&r);
    remove_tree(base);
}
END_TEST

Suite *make_report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("values");
    tcase_add_test(tc, impossible_values_are_refused_by_name);
    tcase_add_test(tc, many_runs_and_groups_are_all_reported);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    /* figures need gnuplot; without it these cases are not run (and do not fail) */
    if (have_gnuplot()) {
        tc = tcase_create("gnuplot");
        tcase_add_test(tc, no_field_of_a_run_reaches_gnuplot_as_code);
        tcase_add_test(tc, output_path_is_not_code);
        tcase_add_test(tc, full_disk_keeps_the_figures);
        tcase_add_test(tc, incomplete_or_failed_figures_are_errors);
        tcase_add_test(tc, page_shows_only_the_figures_drawn);
        tcase_set_timeout(tc, 300);
        suite_add_tcase(s, tc);
        tc = tcase_create("compare");
        tcase_set_tags(tc, "slow");
        tcase_add_test(tc, compare_output_path_is_not_code);
        tcase_set_timeout(tc, 300);
        suite_add_tcase(s, tc);
    } else {
        printf("gnuplot not found: skipping the report cases that draw figures\n");
    }
    return s;
}
