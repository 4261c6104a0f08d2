/* test_plots.c — the figure scripts (plots/NAME.gp) drawn from a fixture comparison directory.
 *
 * tests/fixtures/compare/ is a small hand-made comparison directory with the layout of
 * docs/results-format.md (written by tests/fixtures/make_fixture.py). Each case copies it
 * into a fresh temporary directory, runs `gnuplot -e "dir='TMP'" plots/NAME.gp` and
 * checks what the script promises: exit status 0, a real PNG (the 8-byte signature) and
 * an SVG document for every figure it draws, nothing on standard error that gnuplot calls
 * a warning (a warning usually means a wrong column or an empty selection), and a clean
 * skip when the traces a figure needs are absent.
 *
 * The source tree is $ATTNLAB_SRC when set, else the current directory (the tests run
 * from the top of the tree). Without gnuplot the suite prints one line and leaves the
 * rendering tests out: figures are optional, results are not. */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

/* One script and the figures it writes into DIR/figures/ (NAME.png and NAME.svg each). */
typedef struct figure_case {
    const char *script;     /* plots/<script>.gp */
    const char *figures[5]; /* NULL-terminated */
    int needs_traces;       /* draws from DIR/trace/ and must skip cleanly without it */
} figure_case;

static const figure_case figure_cases[] = {
    {"accuracy", {"accuracy", NULL}, 0},
    {"positions", {"positions", NULL}, 0},
    {"curves", {"curves", NULL}, 0},
    {"attention",
     {"attention_rnn", "attention_enc_self", "attention_dec_self", "attention_cross", NULL},
     1},
    {"gates", {"gates", NULL}, 1},
    {"cost", {"cost", NULL}, 0},
};
enum { N_FIGURE_CASES = sizeof figure_cases / sizeof figure_cases[0] };

enum { PATH_LEN = 1024, CMD_LEN = 4096 };

static const char *src_root(void)
{
    const char *s = getenv("ATTNLAB_SRC");
    return s && *s ? s : ".";
}

/* 1 when a gnuplot program is on the PATH; otherwise prints, once, why the rendering
 * tests are left out. */
static int have_gnuplot(void)
{
    if (system("command -v gnuplot > /dev/null 2>&1") == 0)
        return 1;
    printf("gnuplot not found: skipping figure rendering\n");
    return 0;
}

/* Runs a shell command; returns its exit status, or -1 when it did not exit normally. */
static int run_shell(const char *cmd)
{
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Copies the fixture into a fresh directory made from tmpl (mkdtemp). */
static void copy_fixture(char *tmpl)
{
    ck_assert_msg(mkdtemp(tmpl) != NULL, "mkdtemp(%s) failed", tmpl);
    char cmd[CMD_LEN];
    snprintf(cmd, sizeof cmd, "cp -r '%s/tests/fixtures/compare/.' '%s/'", src_root(), tmpl);
    ck_assert_msg(run_shell(cmd) == 0, "could not copy the fixture: %s", cmd);
}

/* Removes a directory this test made with mkdtemp. */
static void remove_dir(const char *dir)
{
    char cmd[CMD_LEN];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    (void)run_shell(cmd);
}

/* Runs plots/<script>.gp on dir, standard output to dir/<script>.out and standard error
 * to dir/<script>.err. Returns gnuplot's exit status. */
static int draw(const char *dir, const char *script)
{
    char cmd[CMD_LEN];
    snprintf(cmd, sizeof cmd,
             "gnuplot -e \"dir='%s'\" '%s/plots/%s.gp' > '%s/%s.out' 2> '%s/%s.err'", dir,
             src_root(), script, dir, script, dir, script);
    return run_shell(cmd);
}

/* Reads up to n-1 bytes of a file into buf (NUL-terminated); returns the count, or -1. */
static long read_head(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t k = fread(buf, 1, n - 1, f);
    buf[k] = '\0';
    fclose(f);
    return (long)k;
}

/* The start of dir/<script>.<ext> (what draw() captured), for a failure message. */
static const char *peek(const char *dir, const char *script, const char *ext)
{
    static char buf[600];
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/%s.%s", dir, script, ext);
    if (read_head(path, buf, sizeof buf) < 0)
        snprintf(buf, sizeof buf, "(nothing captured)");
    return buf;
}

/* Fails unless dir/figures/<fig>.png is a non-empty PNG and <fig>.svg an SVG document. */
static void assert_figure(const char *dir, const char *fig)
{
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    char path[PATH_LEN];
    struct stat st;

    snprintf(path, sizeof path, "%s/figures/%s.png", dir, fig);
    ck_assert_msg(stat(path, &st) == 0, "%s was not written", path);
    ck_assert_msg(st.st_size > (off_t)sizeof png_sig, "%s is empty", path);
    unsigned char head[8] = {0};
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    ck_assert_msg(got == sizeof head && memcmp(head, png_sig, sizeof png_sig) == 0,
                  "%s does not start with the PNG signature", path);

    snprintf(path, sizeof path, "%s/figures/%s.svg", dir, fig);
    ck_assert_msg(stat(path, &st) == 0 && st.st_size > 0, "%s was not written", path);
    static char svg[8192];
    ck_assert(read_head(path, svg, sizeof svg) > 0);
    ck_assert_msg(strstr(svg, "<svg") != NULL, "%s has no <svg element near its start", path);
}

/* 1 when some line of the file contains "warning" in any case. */
static int has_warning(const char *path, char *line, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int found = 0;
    while (!found && fgets(line, (int)n, f)) {
        for (char *p = line; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        found = strstr(line, "warning") != NULL;
    }
    fclose(f);
    return found;
}

/* ---- every script draws its figures from the fixture ------------------------------------ */

START_TEST(test_script_draws)
{
    const figure_case *c = &figure_cases[_i];
    char dir[] = "/tmp/attnlab-plots-XXXXXX";
    copy_fixture(dir);
    int status = draw(dir, c->script);
    ck_assert_msg(status == 0, "plots/%s.gp exited with %d: %s", c->script, status,
                  peek(dir, c->script, "err"));
    for (size_t k = 0; c->figures[k]; k++)
        assert_figure(dir, c->figures[k]);
    remove_dir(dir);
}
END_TEST

/* ---- gnuplot raises no warning on the fixture ------------------------------------------ */

START_TEST(test_no_warnings)
{
    char dir[] = "/tmp/attnlab-plots-XXXXXX";
    copy_fixture(dir);
    for (size_t i = 0; i < N_FIGURE_CASES; i++) {
        const char *s = figure_cases[i].script;
        ck_assert_msg(draw(dir, s) == 0, "plots/%s.gp failed", s);
        char path[PATH_LEN], line[512];
        snprintf(path, sizeof path, "%s/%s.err", dir, s);
        ck_assert_msg(!has_warning(path, line, sizeof line),
                      "plots/%s.gp warned on the fixture: %s", s, line);
    }
    remove_dir(dir);
}
END_TEST

/* ---- without traces, the trace figures are skipped, not failed ------------------------- */

START_TEST(test_missing_traces_skip)
{
    const figure_case *c = &figure_cases[_i];
    if (!c->needs_traces) /* the other scripts read no trace */
        return;
    char dir[] = "/tmp/attnlab-plots-XXXXXX";
    copy_fixture(dir);
    char cmd[CMD_LEN];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/trace'", dir);
    ck_assert(run_shell(cmd) == 0);
    int status = draw(dir, c->script);
    ck_assert_msg(status == 0, "plots/%s.gp exited with %d without traces", c->script,
                  status);
    for (size_t k = 0; c->figures[k]; k++) {
        char path[PATH_LEN];
        struct stat st;
        snprintf(path, sizeof path, "%s/figures/%s.png", dir, c->figures[k]);
        ck_assert_msg(stat(path, &st) != 0, "%s drawn without its trace files", path);
    }
    ck_assert_msg(strstr(peek(dir, c->script, "out"), "skipping") != NULL,
                  "plots/%s.gp said nothing about the missing traces", c->script);
    remove_dir(dir);
}
END_TEST

/* ---- the fixture has the columns docs/results-format.md names --------------------------- */

/* The files the figures read, and whether the documented columns are the whole header
 * (summary.tsv adds per-length columns after the documented ones). */
static const struct {
    const char *file;
    int prefix_only;
} documented[] = {
    {"accuracy.tsv", 0}, {"positions.tsv", 0}, {"curves.tsv", 0},
    {"cost.tsv", 0},     {"summary.tsv", 1},   {"manifest.tsv", 0},
};

/* Finds the row "| `file` | `columns`..." of the comparison-directory table and copies the
 * columns (space-separated, as documented). Returns 0, or -1 when the row is absent. */
static int doc_columns(const char *file, char *cols, size_t n)
{
    char path[PATH_LEN], line[1024], key[128];
    snprintf(path, sizeof path, "%s/docs/results-format.md", src_root());
    snprintf(key, sizeof key, "| `%s` | `", file);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int in_compare = 0, found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        if (strncmp(line, "## ", 3) == 0)
            in_compare = strstr(line, "comparison directory") != NULL;
        if (!in_compare || strncmp(line, key, strlen(key)) != 0)
            continue;
        const char *a = line + strlen(key), *b = strchr(a, '`');
        if (b && (size_t)(b - a) < n) {
            memcpy(cols, a, (size_t)(b - a));
            cols[b - a] = '\0';
            found = 0;
        }
    }
    fclose(f);
    return found;
}

START_TEST(test_fixture_columns)
{
    char doc[512], header[2048], path[PATH_LEN];
    size_t i = (size_t)_i;
    ck_assert_msg(doc_columns(documented[i].file, doc, sizeof doc) == 0,
                  "docs/results-format.md has no row for %s", documented[i].file);
    snprintf(path, sizeof path, "%s/tests/fixtures/compare/%s", src_root(), documented[i].file);
    ck_assert_msg(read_head(path, header, sizeof header) > 0, "no fixture file %s", path);
    header[strcspn(header, "\n")] = '\0';
    for (char *p = header; *p; p++) /* the file separates by tabs, the table by spaces */
        if (*p == '\t')
            *p = ' ';
    size_t nd = strlen(doc);
    int same = documented[i].prefix_only
                   ? strncmp(header, doc, nd) == 0 && (header[nd] == '\0' || header[nd] == ' ')
                   : strcmp(header, doc) == 0;
    ck_assert_msg(same, "%s: header \"%s\", documented \"%s\"", documented[i].file, header, doc);
}
END_TEST

Suite *make_plots_suite(void)
{
    Suite *s = suite_create("plots");

    /* Rendering needs gnuplot; without it these cases are not run (and do not fail). */
    if (have_gnuplot()) {
        TCase *tc = tcase_create("render");
        tcase_add_loop_test(tc, test_script_draws, 0, N_FIGURE_CASES);
        tcase_add_test(tc, test_no_warnings);
        tcase_add_loop_test(tc, test_missing_traces_skip, 0, N_FIGURE_CASES);
        tcase_set_timeout(tc, 120);
        suite_add_tcase(s, tc);
    }

    TCase *fx = tcase_create("fixture");
    tcase_add_loop_test(fx, test_fixture_columns, 0,
                        (int)(sizeof documented / sizeof documented[0]));
    suite_add_tcase(s, fx);
    return s;
}
