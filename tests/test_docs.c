/* test_docs.c — the lab handouts run as written.
 *
 * What is checked. Every line of a ```sh block in docs/labs/NN-*.md and
 * docs/zh/labs/NN-*.md whose command is attnlab (`build/attnlab ...`, or the copy of the
 * program a lab builds, `.../build/attnlab ...`, also after `echo ... |`) is a command a
 * student will type. Each must
 *   - name a subcommand that exists, with flags that appear in that subcommand's --help
 *     (so the handouts and the help texts agree; the program itself would also accept an
 *     unambiguous abbreviation, the handouts may not use one);
 *   - parse: `train` through cli_check_train_args (the parser of the program, values
 *     included), `eval` by running it against a missing checkpoint, which must give the
 *     runtime status 1 and not the usage status 2;
 *   - run: each lab's commands are run in order in a temporary directory, with every
 *     path under results/labs/ moved there. Training is shrunk to 2 steps and 2
 *     evaluation samples at one length (flags given later win), evaluation to 2
 *     samples; gradcheck, attention, report and the lab's gnuplot lines run as written.
 *     bench is only parsed (its measurements take minutes), then run at one length;
 *     bench --layers runs at one small width and length.
 * Then every results/labs/... file a handout names (figures, tables, checkpoints) must
 * exist: the handouts may only point at files their own commands produce. Every
 * repository path and relative link in README.md, the .md files of docs/ and docs/zh/
 * and the labs must exist, every example a handout shows as a line of a data file must
 * be one, every `function()` cited in docs/README.md must be defined in the sources,
 * and the Chinese handouts must hold exactly the commands of the English ones.
 *
 * Runs the built program (the path in $ATTNLAB, default build/attnlab) from the top of
 * the source tree, like the other suites. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/cli/cli.h"
#include "testhandout.h"
#include "testutil.h"

#define MAX_LABS 32

/* ---- small helpers ------------------------------------------------------------------ */

/* The last path component. */
static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* ---- the handouts, found once when the suite is built ------------------------------- */

static char labs_en[MAX_LABS][PATH_LEN], labs_zh[MAX_LABS][PATH_LEN], keys[MAX_LABS][PATH_LEN];
static size_t n_en, n_zh, n_keys;

static void find_handouts(void)
{
    n_en = ho_find_files("docs/labs/[0-9][0-9]-*.md", labs_en, MAX_LABS);
    n_zh = ho_find_files("docs/zh/labs/[0-9][0-9]-*.md", labs_zh, MAX_LABS);
    n_keys = ho_find_files("docs/labs/keys/[0-9][0-9]-*.md", keys, MAX_LABS);
}

/* Parses a train command with the program's own parser; 0 when it is valid. */
static int parse_train(char *const *words, int n)
{
    static char train_word[] = "train";
    char *v[MAX_ARGS + 2];
    int k = 0;
    v[k++] = train_word;
    for (int i = 0; i < n && k < MAX_ARGS; i++)
        v[k++] = words[i];
    v[k] = NULL;
    return cli_check_train_args(k, v);
}

/* ---- static checks ------------------------------------------------------------------- */

/* The help text of a subcommand, cached by name; NULL when `attnlab CMD --help` fails. */
static const char *help_of(const char *sub)
{
    static char names[16][32];
    static char *texts[16];
    static size_t n;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], sub) == 0)
            return texts[i];
    char log[] = "/tmp/attnlab-docs-help-XXXXXX";
    int fd = mkstemp(log);
    ck_assert(fd >= 0);
    close(fd);
    argvec a = {0};
    av_push(&a, ho_program());
    av_push(&a, sub);
    av_push(&a, "--help");
    int st = ho_run_argv(a.v, 0, log);
    av_free(&a);
    char *text = st == 0 ? ho_read_file(log) : NULL;
    unlink(log);
    if (n < 16) {
        snprintf(names[n], sizeof names[n], "%s", sub);
        texts[n++] = text;
    }
    return text;
}

/* Does the help text name flag as a whole word (followed by neither a letter, a digit
 * nor '-')? */
static int help_names(const char *help, const char *flag)
{
    const size_t n = strlen(flag);
    for (const char *p = strstr(help, flag); p; p = strstr(p + 1, flag)) {
        const char after = p[n];
        const int word_end = !(after == '-' || (after >= 'a' && after <= 'z') ||
                               (after >= '0' && after <= '9'));
        const int word_start = p == help || p[-1] == ' ' || p[-1] == '[' || p[-1] == '\n';
        if (word_end && word_start)
            return 1;
    }
    return 0;
}

/* Every attnlab command of every handout names an existing subcommand and only flags
 * that its --help (or, for commands that take the training settings, train's --help)
 * lists. */
START_TEST(flags_are_in_the_help)
{
    char (*files)[PATH_LEN] = _i == 0 ? labs_en : labs_zh;
    const size_t nf = _i == 0 ? n_en : n_zh;
    for (size_t f = 0; f < nf; f++) {
        static handout h;
        handout_read(&h, files[f]);
        ck_assert_msg(h.err[0] == '\0', "%s", h.err);
        for (size_t i = 0; i < h.ncmds; i++) {
            const cmd *c = &h.cmds[i];
            if (!c->is_attnlab || c->argc < 2 || c->argv[1][0] == '-')
                continue;
            const char *sub = c->argv[1];
            if (strcmp(sub, "help") == 0)
                continue;
            const char *help = help_of(sub);
            ck_assert_msg(help != NULL, "%s:%d: 'attnlab %s --help' fails: no such command",
                          h.path, c->line, sub);
            const char *train = strstr(help, "SETTINGS") ? help_of("train") : NULL;
            for (int k = 2; k < c->argc; k++) {
                if (strncmp(c->argv[k], "--", 2) != 0)
                    continue;
                char flag[128];
                snprintf(flag, sizeof flag, "%s", c->argv[k]);
                char *eq = strchr(flag, '=');
                if (eq)
                    *eq = '\0';
                ck_assert_msg(help_names(help, flag) || (train && help_names(train, flag)),
                              "%s:%d: 'attnlab %s' has no flag %s in its --help", h.path,
                              c->line, sub, flag);
            }
        }
        handout_free(&h);
    }
}
END_TEST

/* Each handout has a key and a Chinese version, and both versions hold the same
 * commands, line for line. */
START_TEST(translations_and_keys_match)
{
    ck_assert_msg(n_en >= 5, "expected at least five handouts in docs/labs, found %zu", n_en);
    for (size_t i = 0; i < n_en; i++) {
        const char *name = base_name(labs_en[i]);
        int key = 0, zh = -1;
        for (size_t k = 0; k < n_keys; k++)
            key |= strcmp(base_name(keys[k]), name) == 0;
        for (size_t k = 0; k < n_zh; k++)
            if (strcmp(base_name(labs_zh[k]), name) == 0)
                zh = (int)k;
        ck_assert_msg(key, "no teacher's key docs/labs/keys/%s", name);
        ck_assert_msg(zh >= 0, "no Chinese handout docs/zh/labs/%s", name);
        static handout en, cn;
        handout_read(&en, labs_en[i]);
        handout_read(&cn, labs_zh[zh]);
        ck_assert_msg(en.ncmds > 0, "%s has no build/attnlab command in a ```sh block",
                      en.path);
        for (const char *a = en.sh, *b = cn.sh; *a || *b;) {
            const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
            ck_assert_msg(ea && eb && ea - a == eb - b && strncmp(a, b, (size_t)(ea - a)) == 0,
                          "the commands of %s and %s differ at: %.*s", en.path, cn.path,
                          ea ? (int)(ea - a) : (int)strlen(a), a);
            a = ea + 1;
            b = eb + 1;
        }
        for (const char *sec = "## Goal\0## Background\0## Predict before you run\0"
                               "## What to look at\0## Questions\0## Extension\0";
             *sec; sec += strlen(sec) + 1)
            ck_assert_msg(strstr(en.text, sec) != NULL, "%s has no section '%s'", en.path,
                          sec);
        handout_free(&en);
        handout_free(&cn);
    }
    ck_assert_msg(n_zh == n_en, "%zu Chinese handouts for %zu English ones", n_zh, n_en);
}
END_TEST

/* Every example a handout shows as a line of a data file (a line with a tab in a ```text
 * block) is a whole line of one of the .tsv files of docs/labs/data: a student who looks
 * it up, or gives its source to `eval --input`, finds it there. */
START_TEST(shown_examples_are_lines_of_the_data)
{
    static char data[8][PATH_LEN];
    const size_t nd = ho_find_files("docs/labs/data/*.tsv", data, 8);
    ck_assert_uint_ge(nd, 1);
    char *all = NULL; /* every data line, each between newlines */
    ho_append_line(&all, "");
    for (size_t i = 0; i < nd; i++) {
        char *t = ho_read_file(data[i]);
        ck_assert_ptr_nonnull(t);
        ho_append_line(&all, t);
        free(t);
    }
    for (int zh = 0; zh < 2; zh++)
        for (size_t f = 0; f < (zh ? n_zh : n_en); f++) {
            const char *path = zh ? labs_zh[f] : labs_en[f];
            char *text = ho_read_file(path);
            ck_assert_ptr_nonnull(text);
            int in_text = 0, lineno = 0;
            for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                lineno++; /* of the non-empty lines: enough to find it */
                if (strncmp(line, "```", 3) == 0) {
                    in_text = !in_text && strcmp(line, "```text") == 0;
                    continue;
                }
                if (!in_text || !strchr(line, '\t'))
                    continue;
                char whole[LINE_LEN + 2];
                snprintf(whole, sizeof whole, "\n%s\n", line);
                ck_assert_msg(strstr(all, whole), "%s (non-empty line %d): '%s' is shown as "
                              "an example but no data file holds it", path, lineno, line);
            }
            free(text);
        }
    free(all);
}
END_TEST

/* Checks the repository paths one document names: relative links (resolved from the
 * document's folder) and `paths` in backquotes that start with a source or docs folder.
 * Returns the first missing one in missing (empty when none). */
static void check_paths(const char *doc, char *missing, size_t n)
{
    char *text = ho_read_file(doc);
    missing[0] = '\0';
    ck_assert_msg(text != NULL, "cannot read %s", doc);
    char dir[PATH_LEN];
    snprintf(dir, sizeof dir, "%.*s", (int)sizeof dir - 1, doc);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, "."); /* a document at the top */
    static const char *const roots[] = {"common/", "lstm/",  "rnn_attention/", "transformer/",
                                        "plots/",  "tests/", "docs/",          NULL};
    for (const char *p = text; *p && !missing[0]; p++) {
        char target[PATH_LEN], path[2 * PATH_LEN];
        if (p[0] == ']' && p[1] == '(') {
            const char *end = strchr(p + 2, ')');
            size_t len = end ? (size_t)(end - p - 2) : 0;
            if (!end || len == 0 || len >= sizeof target)
                continue;
            memcpy(target, p + 2, len);
            target[len] = '\0';
            char *hash = strchr(target, '#');
            if (hash)
                *hash = '\0';
            if (!target[0] || strstr(target, "://") || strncmp(target, "mailto:", 7) == 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, target);
            if (!ho_exists(path))
                snprintf(missing, n, "%.200s: link to %.200s (%.400s)", doc, target, path);
        } else if (p[0] == '`' && (p == text || p[-1] != '`') && p[1] != '`') {
            const char *end = strchr(p + 1, '`');
            size_t len = end ? (size_t)(end - p - 1) : 0;
            if (!end || len == 0 || len >= sizeof target)
                continue;
            memcpy(target, p + 1, len);
            target[len] = '\0';
            p = end;
            int rooted = 0;
            for (const char *const *r = roots; *r; r++)
                rooted |= strncmp(target, *r, strlen(*r)) == 0;
            if (!rooted || strpbrk(target, " *{}<>=,'\"") || strstr(target, "NN") ||
                strstr(target, "NAME"))
                continue;
            if (!ho_exists(target))
                snprintf(missing, n, "%.200s: `%.300s` does not exist", doc, target);
        }
    }
    free(text);
}

START_TEST(named_paths_exist)
{
    static char docs[8 * MAX_LABS + 8][PATH_LEN];
    size_t n = 0;
    snprintf(docs[n++], PATH_LEN, "README.md");
    n += ho_find_files("docs/*.md", docs + n, MAX_LABS);
    n += ho_find_files("docs/zh/*.md", docs + n, MAX_LABS);
    n += ho_find_files("docs/labs/*.md", docs + n, MAX_LABS);
    n += ho_find_files("docs/labs/keys/*.md", docs + n, MAX_LABS);
    n += ho_find_files("docs/zh/labs/*.md", docs + n, MAX_LABS);
    n += ho_find_files("docs/zh/labs/keys/*.md", docs + n, MAX_LABS);
    n += ho_find_files("docs/labs/worksheets/*.md", docs + n, MAX_LABS);
    n += ho_find_files("docs/zh/labs/worksheets/*.md", docs + n, MAX_LABS);
    for (size_t i = 0; i < n; i++) {
        char missing[3 * PATH_LEN];
        check_paths(docs[i], missing, sizeof missing);
        ck_assert_msg(missing[0] == '\0', "%s", missing);
    }
}
END_TEST

/* Every `name()` docs/README.md cites is defined or declared in the sources. */
START_TEST(cited_functions_exist)
{
    static char srcs[256][PATH_LEN];
    size_t ns = 0;
    static const char *const pats[] = {"attnlab.c", "common/core/*.[ch]", "common/cli/*.[ch]", "lstm/*.[ch]",
                                       "rnn_attention/*.[ch]", "transformer/*.[ch]", NULL};
    for (const char *const *p = pats; *p; p++)
        ns += ho_find_files(*p, srcs + ns, 256 - ns);
    char *all = NULL;
    for (size_t i = 0; i < ns; i++) {
        char *t = ho_read_file(srcs[i]);
        ck_assert_ptr_nonnull(t);
        ho_append_line(&all, t);
        free(t);
    }
    char *doc = ho_read_file("docs/README.md");
    ck_assert_ptr_nonnull(doc);
    size_t cited = 0;
    for (const char *p = strchr(doc, '`'); p; p = strchr(p + 1, '`')) {
        const char *q = p + 1;
        while ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')
            q++;
        if (q == p + 1 || strncmp(q, "()`", 3) != 0)
            continue;
        char call[128];
        snprintf(call, sizeof call, "%.*s(", (int)(q - p - 1), p + 1);
        /* a definition or a declaration: the name right after a type, at a line start
         * or after a space or '*' */
        int found = 0;
        for (const char *s = strstr(all, call); s && !found; s = strstr(s + 1, call))
            found = s > all && (s[-1] == ' ' || s[-1] == '*' || s[-1] == '\n');
        ck_assert_msg(found, "docs/README.md cites %s) but no source defines it", call);
        cited++;
        p = q + 2;
    }
    ck_assert_msg(cited >= 10, "docs/README.md cites only %zu functions", cited);
    free(doc);
    free(all);
}
END_TEST

/* ---- running the handouts --------------------------------------------------------------- */

/* Every results/labs/... file with an extension worth checking that the text names. */
static size_t named_results(const char *text, char (*out)[PATH_LEN], size_t max)
{
    static const char key[] = "results/labs/";
    static const char *const exts[] = {".png", ".svg", ".tsv", ".html", ".ckpt", NULL};
    size_t n = 0;
    for (const char *p = strstr(text, key); p && n < max; p = strstr(p + 1, key)) {
        size_t len = 0;
        while (p[len] && (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                 "0123456789_./-", p[len])))
            len++;
        while (len > 0 && p[len - 1] == '.')
            len--;
        if (len >= PATH_LEN || (p[len] && strchr("*{", p[len])))
            continue;
        char path[PATH_LEN];
        memcpy(path, p, len);
        path[len] = '\0';
        int ok = 0;
        for (const char *const *e = exts; *e; e++)
            ok |= len > strlen(*e) && strcmp(path + len - strlen(*e), *e) == 0;
        if (ok && !strstr(path, "NAME"))
            snprintf(out[n++], PATH_LEN, "%s", path);
    }
    return n;
}

/* Is gnuplot on the PATH? */
static int have_gnuplot(void)
{
    char log[] = "/tmp/attnlab-docs-gp-XXXXXX";
    int fd = mkstemp(log);
    ck_assert(fd >= 0);
    close(fd);
    static char name[] = "gnuplot", version[] = "--version";
    char *argv[] = {name, version, NULL};
    int st = ho_run_argv(argv, 1, log);
    unlink(log);
    return st == 0;
}

/* Runs one attnlab command of a handout (shrunk where it would take long) in dir; on
 * failure, fails the test with the command and the end of its output. */
static void run_attnlab(const handout *h, const cmd *c, const char *dir)
{
    char text[LINE_LEN], log[PATH_LEN + 16], tail[600];
    ho_cmd_text(c, text, sizeof text);
    snprintf(log, sizeof log, "%s/log.txt", dir);
    const char *sub = c->argc > 1 ? c->argv[1] : "";
    argvec a = {0};
    int want = 0, st;

    /* no file a handout writes may land outside results/labs/ */
    for (int k = 1; k < c->argc; k++)
        ck_assert_msg(!strstr(c->argv[k], "results/") || strstr(c->argv[k], "results/labs/"),
                      "%s:%d: writes outside results/labs/: %s", h->path, c->line, text);

    if (strcmp(sub, "train") == 0) {
        ck_assert_msg(ho_has_flag(c, "--out") || ho_has_flag(c, "--resume"),
                      "%s:%d: train without --out writes outside results/labs/: %s", h->path,
                      c->line, text);
        ck_assert_msg(parse_train(c->argv + 2, c->argc - 2) == 0,
                      "%s:%d: the program refuses: %s", h->path, c->line, text);
        if (ho_has_flag(c, "--resume"))
            return;
        ho_build_args(&a, c, dir);
        static const char *const tiny[] = {"--steps", "2", "--samples", "2", "--log-every", "1",
                                           "--checkpoint-every", "0", "--quiet", NULL};
        for (const char *const *t = tiny; *t; t++)
            av_push(&a, *t);
        /* one evaluation length: 4, or for a file task the shortest it trains on (its test
         * set may hold no other); a file task without --train-len evaluates all of it */
        char first[32] = "4";
        const char *task = ho_flag_value(c, "--task"), *range = ho_flag_value(c, "--train-len");
        if (task && strncmp(task, "file:", 5) == 0)
            snprintf(first, sizeof first, "%.*s", range ? (int)strcspn(range, ":") : 0,
                     range ? range : "");
        if (first[0]) {
            av_push(&a, "--eval-lengths");
            av_push(&a, first);
        }
        if (ho_has_flag(c, "--cost-lengths")) {
            av_push(&a, "--cost-lengths");
            av_push(&a, "4");
        }
    } else if (strcmp(sub, "eval") == 0) {
        /* parse only: against a missing checkpoint the status must be 1, not 2 */
        ho_build_args(&a, c, dir);
        for (int k = 2; k < a.n; k++)
            if (strcmp(a.v[k], "--checkpoint") == 0 && k + 1 < a.n) {
                free(a.v[k + 1]);
                a.v[k + 1] = strdup("/nonexistent/attnlab-docs/model.ckpt");
            } else if (strncmp(a.v[k], "--checkpoint=", 13) == 0) {
                free(a.v[k]);
                a.v[k] = strdup("--checkpoint=/nonexistent/attnlab-docs/model.ckpt");
            }
        st = ho_run_argv(a.v, 0, log);
        ho_log_tail(log, tail, sizeof tail);
        ck_assert_msg(st == 1, "%s:%d: status %d (usage error?) for: %s\n%s", h->path,
                      c->line, st, text, tail);
        av_free(&a);
        ho_build_args(&a, c, dir);
        av_push(&a, "--samples");
        av_push(&a, "2");
    } else if (strcmp(sub, "compare") == 0) {
        ho_build_args(&a, c, dir);
        av_push(&a, "--print-jobs");
    } else if (strcmp(sub, "bench") == 0 && ho_has_flag(c, "--layers")) {
        /* One layer of each kind at one small width and length, once: the files the
         * handout names (a flag given again keeps its last value). */
        ho_build_args(&a, c, dir);
        static const char *const tiny[] = {"--widths", "8", "--lengths", "8", "--reps", "1",
                                           "--threads", "1", NULL};
        for (const char *const *t = tiny; *t; t++)
            av_push(&a, *t);
    } else if (strcmp(sub, "bench") == 0) {
        /* Its measurements take minutes, so first its values are parsed: bench reads
         * --models, --lengths and --reps, then refuses a --model; a refusal that names
         * --model means everything before it was accepted. Then it measures one model at
         * one length once, which writes the files the handout names. */
        ho_build_args(&a, c, dir);
        av_push(&a, "--model");
        av_push(&a, "lstm");
        st = ho_run_argv(a.v, 0, log);
        ho_log_tail(log, tail, sizeof tail);
        ck_assert_msg(st == 2 && strstr(tail, "--model:"), "%s:%d: status %d for: %s\n%s",
                      h->path, c->line, st, text, tail);
        av_free(&a);
        ho_build_args(&a, c, dir);
        static const char *const tiny[] = {"--models", "lstm", "--lengths", "8", "--reps", "1",
                                           NULL};
        for (const char *const *t = tiny; *t; t++)
            av_push(&a, *t);
    } else {
        /* help, --version, gradcheck, attention, report: as written */
        ho_build_args(&a, c, dir);
    }
    st = ho_run_argv(a.v, 0, log);
    ho_log_tail(log, tail, sizeof tail);
    ck_assert_msg(st == want, "%s:%d: status %d for: %s\n%s", h->path, c->line, st, text,
                  tail);
    if (strcmp(sub, "compare") == 0) {
        /* each job it prints is a train command the program must accept */
        char *jobs = ho_read_file(log);
        ck_assert_ptr_nonnull(jobs);
        for (char *line = strtok(jobs, "\n"); line; line = strtok(NULL, "\n")) {
            char *w[MAX_ARGS + 1];
            int bad = 0, n = ho_split_words(line, w, MAX_ARGS, &bad);
            ck_assert_msg(n >= 2 && strcmp(w[1], "train") == 0, "compare printed: %s", line);
            ck_assert_msg(parse_train(w + 2, n - 2) == 0, "compare printed a bad job: %s",
                          line);
            for (int k = 0; k < n; k++)
                free(w[k]);
        }
        free(jobs);
    }
    av_free(&a);
}

/* Runs every command of handout _i in order in a fresh directory, then checks that every
 * results/labs/ file it names was made. */
START_TEST(handout_runs)
{
    char dir[] = "/tmp/attnlab-docs-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static handout h;
    handout_read(&h, labs_en[_i]);
    ck_assert_msg(h.err[0] == '\0', "%s", h.err);
    const int gnuplot = have_gnuplot();
    for (size_t i = 0; i < h.ncmds; i++) {
        const cmd *c = &h.cmds[i];
        if (c->is_attnlab) {
            run_attnlab(&h, c, dir);
        } else if (gnuplot) {
            argvec a = {0};
            char text[LINE_LEN], log[PATH_LEN + 16], tail[600];
            ho_cmd_text(c, text, sizeof text);
            snprintf(log, sizeof log, "%s/log.txt", dir);
            ho_build_args(&a, c, dir);
            int st = ho_run_argv(a.v, 1, log);
            ho_log_tail(log, tail, sizeof tail);
            ck_assert_msg(st == 0, "%s:%d: status %d for: %s\n%s", h.path, c->line, st, text,
                          tail);
            av_free(&a);
        }
    }
    static char named[256][PATH_LEN];
    size_t n = named_results(h.text, named, 256);
    for (size_t i = 0; i < n; i++) {
        const size_t len = strlen(named[i]);
        const int figure = len > 4 && (strcmp(named[i] + len - 4, ".png") == 0 ||
                                       strcmp(named[i] + len - 4, ".svg") == 0);
        if (figure && !gnuplot)
            continue; /* no gnuplot here: nothing draws figures */
        char *path = ho_relocate(named[i], dir);
        ck_assert_msg(ho_exists(path), "%s names %s, which its commands do not produce", h.path,
                      named[i]);
        free(path);
    }
    handout_free(&h);
    char rm[sizeof dir + 16];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(rm), 0);
}
END_TEST

Suite *make_docs_suite(void)
{
    find_handouts();
    Suite *s = suite_create("docs");
    TCase *tc = tcase_create("static");
    tcase_add_loop_test(tc, flags_are_in_the_help, 0, 2);
    tcase_add_test(tc, translations_and_keys_match);
    tcase_add_test(tc, named_paths_exist);
    tcase_add_test(tc, cited_functions_exist);
    tcase_add_test(tc, shown_examples_are_lines_of_the_data);
    suite_add_tcase(s, tc);
    tc = tcase_create("handouts");
    tcase_set_tags(tc, "slow");
    /* lab 09's trainings each read the 24,000 lines of the toy translation (seconds of
     * their own, minutes on a loaded machine or under the sanitizers) */
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, handout_runs, 0, (int)(n_en ? n_en : 1));
    suite_add_tcase(s, tc);
    return s;
}
