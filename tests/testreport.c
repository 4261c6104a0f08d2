/* testreport.c — run directories made from the fixture, and the program run as a user
 * would (see testreport.h). */
#include "testreport.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

enum { TEXT_LEN = 1 << 20 };

void ru_fmt(char *buf, size_t n, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int w = vsnprintf(buf, n, f, ap);
    va_end(ap);
    ck_assert_msg(w >= 0 && (size_t)w < n, "%zu bytes are too few for \"%s\"", n, f);
}

const char *ru_src_root(void)
{
    const char *s = getenv("ATTNLAB_SRC");
    return s && *s ? s : ".";
}

/* ---- files ----------------------------------------------------------------------------- */

/* Reads a whole file (NUL-terminated; free it); NULL when it cannot be read. */
char *ru_slurp(const char *path, size_t *len)
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

void ru_spit(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert(fwrite(text, 1, len, f) == len);
    ck_assert(fclose(f) == 0);
}

char *ru_read(const char *dir, const char *name)
{
    char path[RU_PATH + 64];
    ru_fmt(path, sizeof path, "%s/%s", dir, name);
    char *t = ru_slurp(path, NULL);
    ck_assert_msg(t != NULL, "cannot read %s", path);
    return t;
}

void ru_put(const char *dir, const char *name, const char *text)
{
    char path[RU_PATH + 64];
    ru_fmt(path, sizeof path, "%s/%s", dir, name);
    ru_spit(path, text, strlen(text));
}

void ru_mkdir_p(const char *dir)
{
    char path[RU_PATH];
    ru_fmt(path, sizeof path, "%s", dir);
    for (char *p = path + 1;; p++) /* each parent, then dir; no shell, whatever the name */
        if (*p == '/' || *p == '\0') {
            const char keep = *p;
            *p = '\0';
            ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", path,
                          strerror(errno));
            *p = keep;
            if (!keep)
                break;
        }
}

void ru_remove_tree(const char *dir)
{
    char cmd[RU_PATH + 32];
    ru_fmt(cmd, sizeof cmd, "rm -rf '%s'", dir);
    (void)system(cmd);
}

/* A fresh directory /tmp/attnlab-report-XXXXXX, written into dir. */
void ru_fresh_dir(char *dir, size_t n)
{
    ru_fmt(dir, n, "/tmp/attnlab-report-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* The number of entries of dir (without . and ..), -1 when it cannot be read. */
long ru_count_entries(const char *dir)
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

/* Applies e to text (a file of the fixture) and returns the new text (free it). */
static char *apply(const char *text, const ru_edit *e)
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
        if (line == 0 && e->op == RU_SET && e->row > 0) { /* find the column */
            char hdr[8192];
            ru_fmt(hdr, sizeof hdr, "%s", cur);
            long k = 0;
            for (char *c = strtok(hdr, "\t"); c; c = strtok(NULL, "\t"), k++)
                if (strcmp(c, e->field) == 0)
                    col = k;
            ck_assert_msg(col >= 0, "%s has no column %s", e->file, e->field);
        }
        if (line > 0 && e->op == RU_CUT)
            continue;
        if (line > 0 && e->op == RU_DUP && line == e->row) {
            dup_line = start;
            dup_len = l;
        }
        int replace = 0;
        if (e->op == RU_SET && e->row == 0 && line > 0) {
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
        if (e->op == RU_SET && e->row > 0 && line == e->row) {
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
    if (e->op == RU_DUP) {
        ck_assert_msg(dup_line != NULL, "%s has no row %zu", e->file, e->row);
        strncat(out, dup_line, dup_len);
        strcat(out, "\n");
    }
    if (e->op == RU_ADD) {
        strcat(out, e->value);
        strcat(out, "\n");
    }
    return out;
}

void ru_make_run(const char *dir, const ru_edit *edits, size_t ne)
{
    ru_mkdir_p(dir);
    for (size_t i = 0; i < N_RUN_FILES; i++) {
        char from[RU_PATH], to[RU_PATH];
        ru_fmt(from, sizeof from, "%s/tests/fixtures/run/%s", ru_src_root(), run_files[i]);
        ru_fmt(to, sizeof to, "%s/%s", dir, run_files[i]);
        size_t len;
        char *text = ru_slurp(from, &len);
        ck_assert_msg(text != NULL, "no fixture %s", from);
        int deleted = 0;
        for (size_t k = 0; k < ne; k++) {
            if (strcmp(edits[k].file, run_files[i]) != 0)
                continue;
            if (edits[k].op == RU_DEL) {
                deleted = 1;
                continue;
            }
            char *next = apply(text, &edits[k]);
            free(text);
            text = next;
        }
        if (!deleted)
            ru_spit(to, text, strlen(text));
        free(text);
    }
}

void ru_make_run1(const char *base, const char *name, const ru_edit *e)
{
    char dir[RU_PATH];
    ru_fmt(dir, sizeof dir, "%s/runs/%s", base, name);
    ru_make_run(dir, e, e ? 1 : 0);
}

/* ---- running the program --------------------------------------------------------------- */

void ru_result_free(ru_result *r)
{
    free(r->out);
    free(r->err);
}

/* Runs the program with args (NULL-terminated, without argv[0]). plots: NULL leaves
 * ATTNLAB_PLOTS as it is, else sets it. fsize > 0 limits the size of every file the
 * program (and gnuplot) writes, SIGXFSZ ignored: writes beyond it fail as on a full disk. */
void ru_run(ru_result *r, const char *const *args, const char *plots, rlim_t fsize)
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
    r->out = ru_slurp(outp, NULL);
    r->err = ru_slurp(errp, NULL);
    ck_assert(r->out && r->err);
    close(fo);
    close(fe);
    unlink(outp);
    unlink(errp);
}

/* The line of text that contains what, copied into buf ("" when none). */
const char *ru_line_with(const char *text, const char *what, char *buf, size_t n)
{
    const char *hit = strstr(text, what);
    buf[0] = '\0';
    if (!hit)
        return buf;
    const char *start = hit;
    while (start > text && start[-1] != '\n')
        start--;
    size_t l = strcspn(start, "\n");
    ru_fmt(buf, n, "%.*s", (int)l, start);
    return buf;
}

/* Is gnuplot on the PATH? */
int ru_have_gnuplot(void)
{
    return system("command -v gnuplot > /dev/null 2>&1") == 0;
}

/* Counts the lines of text that contain what. */
size_t ru_count_lines_with(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

/* ---- pages ------------------------------------------------------------------------------ */

char *ru_slurp_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    ck_assert_ptr_nonnull(buf);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            ck_assert_ptr_nonnull(buf);
        }
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

unsigned char *ru_base64_decode(const char *s, size_t *len)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t k = strspn(s, abc), pad = strspn(s + k, "=");
    if ((k + pad) % 4 != 0 || pad > 2)
        return NULL;
    unsigned char *out = malloc(k * 3 / 4 + 3);
    ck_assert_ptr_nonnull(out);
    size_t n = 0;
    unsigned long acc = 0;
    for (size_t i = 0; i < k; i++) {
        acc = acc << 6 | (unsigned long)(strchr(abc, s[i]) - abc);
        if (i % 4 == 3) {
            out[n++] = (unsigned char)(acc >> 16);
            out[n++] = (unsigned char)(acc >> 8);
            out[n++] = (unsigned char)acc;
            acc = 0;
        }
    }
    if (k % 4 == 2) /* 12 bits: one byte */
        out[n++] = (unsigned char)(acc >> 4);
    else if (k % 4 == 3) /* 18 bits: two bytes */
        out[n++] = (unsigned char)(acc >> 10), out[n++] = (unsigned char)(acc >> 2);
    *len = n;
    return out;
}

void ru_fake_fc_list(const char *dir, const char *family)
{
    char bin[RU_PATH + 8], path[RU_PATH + 32], script[256], env[2 * RU_PATH];
    ru_fmt(bin, sizeof bin, "%s/bin", dir);
    ru_mkdir_p(bin);
    ru_fmt(path, sizeof path, "%s/fc-list", bin);
    ru_fmt(script, sizeof script, "#!/bin/sh\n%s%s%s", *family ? "echo '" : "", family,
           *family ? "'\n" : "");
    ru_spit(path, script, strlen(script));
    ck_assert_int_eq(chmod(path, 0755), 0);
    const char *old = getenv("PATH");
    ru_fmt(env, sizeof env, "%s:%s", bin, old ? old : "/usr/bin:/bin");
    ck_assert_int_eq(setenv("PATH", env, 1), 0);
}
