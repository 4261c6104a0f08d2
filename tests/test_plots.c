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
 * The scripts are also run as `attnlab report` runs them (in the comparison directory,
 * into a temporary folder named by figs=), and on a folder whose name a shell would run.
 * Then report itself: a figure replaces the one in figures/ only when it is complete — a
 * full disk (RLIMIT_FSIZE), a script that writes half a figure or fails, leave the
 * earlier figures as they were, name the figure and end with status 1 — and report.html
 * shows only the figures the report drew (run directories from tests/fixtures/run/,
 * testreport.h). What the page shows of them is test_page.c's.
 *
 * The source tree is $ATTNLAB_SRC when set, else the current directory (the tests run
 * from the top of the tree). Without gnuplot the suite prints one line and leaves the
 * rendering tests out: figures are optional, results are not. */
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/cli/report.h"
#include "testreport.h"
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
    {"distance", {"distance", NULL}, 0},
    {"bleu", {"bleu", NULL}, 0},
    {"sweep", {"sweep", NULL}, 0},
    {"curves", {"curves", NULL}, 0},
    {"budget", {"budget", NULL}, 0},
    {"capacity", {"capacity", NULL}, 0},
    {"attention",
     {"attention_rnn", "attention_enc_self", "attention_dec_self", "attention_cross", NULL},
     1},
    {"gates", {"gates", NULL}, 1},
    {"cost", {"cost", NULL}, 0},
    {"layers", {"layers", NULL}, 0},
};
enum { N_FIGURE_CASES = sizeof figure_cases / sizeof figure_cases[0] };

enum { PATH_LEN = 1024, CMD_LEN = 4096 };

static const char *src_root(void)
{
    const char *s = getenv("ATTNLAB_SRC");
    return s && *s ? s : ".";
}

/* Runs a shell command; returns its exit status, or -1 when it did not exit normally. */
static int run_shell(const char *cmd)
{
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Writes trace_vars.gp into every folder of dir/trace/, as attnlab report does for the
 * traces it copies (report_write_trace_vars): the scripts read the traces from it. */
static void write_trace_vars(const char *dir)
{
    char trace[PATH_LEN], sub[2 * PATH_LEN], err[512];
    snprintf(trace, sizeof trace, "%s/trace", dir);
    DIR *d = opendir(trace);
    if (!d)
        return; /* no trace: nothing to write */
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        snprintf(sub, sizeof sub, "%s/%s", trace, e->d_name);
        if (e->d_name[0] == '.' || stat(sub, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        ck_assert_msg(report_write_trace_vars(sub, err, sizeof err) == 0, "%s", err);
    }
    closedir(d);
}

/* Copies the fixture into a fresh directory made from tmpl (mkdtemp), with what attnlab
 * report adds before it runs a script: trace_vars.gp beside the traces and figures/. */
static void copy_fixture(char *tmpl)
{
    ck_assert_msg(mkdtemp(tmpl) != NULL, "mkdtemp(%s) failed", tmpl);
    char cmd[CMD_LEN];
    snprintf(cmd, sizeof cmd, "cp -r '%s/tests/fixtures/compare/.' '%s/' && mkdir '%s/figures'",
             src_root(), tmpl, tmpl);
    ck_assert_msg(run_shell(cmd) == 0, "could not copy the fixture: %s", cmd);
    write_trace_vars(tmpl);
}

/* Removes a directory this test made with mkdtemp. */
static void remove_dir(const char *dir)
{
    char cmd[CMD_LEN];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    (void)run_shell(cmd);
}

/* Runs plots/<script>.gp on dir with the gnuplot settings expr (e.g. "formats='svg'")
 * added, standard output to dir/<script>.out and standard error to dir/<script>.err.
 * Returns gnuplot's exit status. */
static int draw_with(const char *dir, const char *script, const char *expr)
{
    char cmd[CMD_LEN];
    snprintf(cmd, sizeof cmd,
             "gnuplot -e \"dir='%s'; %s\" '%s/plots/%s.gp' > '%s/%s.out' 2> '%s/%s.err'", dir,
             expr, src_root(), script, dir, script, dir, script);
    return run_shell(cmd);
}

/* draw_with, the formats left to the script (PNG and SVG). */
static int draw(const char *dir, const char *script) { return draw_with(dir, script, ""); }

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

/* ---- groups named with their settings: the folder of their trace, a readable legend ---- */

START_TEST(test_variants_draw)
{
    static const char *const scripts[] = {"accuracy", "positions", "attention", "gates", "cost"};
    char dir[] = "/tmp/attnlab-plots-XXXXXX", cmd[CMD_LEN], path[PATH_LEN], line[512], *svg;
    copy_fixture(dir);
    /* every model as a variant, its rows and its trace folder renamed to match */
    snprintf(cmd, sizeof cmd, "cd '%s' && sed -i 's/^lstm\t/lstm:hidden=128\t/; "
             "s/^rnn_attention\t/rnn_attention:cell=lstm\t/; s/^transformer\t/transformer:"
             "pos=learned,forget_bias=0\t/; s/^\\(models\\|traced\\) = .*/\\1 = \"lstm:hidden=128 "
             "rnn_attention:cell=lstm transformer:pos=learned,forget_bias=0\"/' *.tsv "
             "figure_vars.gp && cd trace && mv lstm lstm:hidden=128 && mv rnn_attention "
             "rnn_attention:cell=lstm && mv transformer transformer:pos=learned,forget_bias=0",
             dir);
    ck_assert_msg(run_shell(cmd) == 0, "%s", cmd);
    for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
        ck_assert_msg(draw(dir, scripts[i]) == 0, "plots/%s.gp failed: %s", scripts[i],
                      peek(dir, scripts[i], "err"));
        snprintf(path, sizeof path, "%s/%s.err", dir, scripts[i]);
        ck_assert_msg(!has_warning(path, line, sizeof line), "plots/%s.gp warned: %s",
                      scripts[i], line);
        ck_assert_msg(!strstr(peek(dir, scripts[i], "out"), "skipping"), "plots/%s.gp did "
                      "not find the variant's trace: %s", scripts[i], peek(dir, scripts[i], "out"));
    }
    snprintf(path, sizeof path, "%s/figures/accuracy.svg", dir); /* legend: flags */
    ck_assert_msg((svg = ru_slurp(path, NULL)) && strstr(svg, "rnn_attention --cell lstm") &&
                  strstr(svg, "transformer --pos learned --forget-bias 0"),
                  "the legend does not name the variants as flags");
    free(svg);
    remove_dir(dir);
}
END_TEST

/* ---- the trained range: its right side labelled only where longer lengths were tested -- */

START_TEST(beyond_labelled_only_past_the_trained_range)
{
    char dir[] = "/tmp/attnlab-plots-XXXXXX", cmd[CMD_LEN], path[PATH_LEN], *svg;
    copy_fixture(dir); /* trained 4-32, evaluated up to 64 */
    ck_assert_msg(draw_with(dir, "accuracy", "formats='svg'") == 0, "plots/accuracy.gp failed: "
                  "%s", peek(dir, "accuracy", "err"));
    snprintf(path, sizeof path, "%s/figures/accuracy.svg", dir);
    ck_assert_msg((svg = ru_slurp(path, NULL)) && strstr(svg, "beyond: never trained"),
                  "lengths past the trained 32 were evaluated, yet %s has no 'beyond' label",
                  path);
    free(svg);
    /* trained on every length it was tested on: nothing lies beyond */
    snprintf(cmd, sizeof cmd, "sed -i 's/^train_max = .*/train_max = 64/' '%s/figure_vars.gp'",
             dir);
    ck_assert_msg(run_shell(cmd) == 0, "%s", cmd);
    ck_assert_msg(draw_with(dir, "accuracy", "formats='svg'") == 0, "plots/accuracy.gp failed: "
                  "%s", peek(dir, "accuracy", "err"));
    ck_assert_msg((svg = ru_slurp(path, NULL)) && strstr(svg, "trained on L = 4–64") &&
                  !strstr(svg, "beyond: never trained"),
                  "trained up to the longest length tested, %s still labels what lies beyond "
                  "(or lacks its trained range)", path);
    free(svg);
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
    /* as attnlab report leaves it: no trace, and figure_vars.gp names none */
    snprintf(cmd, sizeof cmd, "rm -rf '%s/trace' && sed -i 's/^traced = .*/traced = \"\"/' "
             "'%s/figure_vars.gp'", dir, dir);
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

/* ---- a folder name a shell would run is only a name ------------------------------------ */

START_TEST(test_paths_are_quoted_for_the_shell)
{
    /* the fixture in a folder named like a command, figures sent to another such folder
     * with figs=; each script hands these paths to a shell (mkdir, test, head, ls) */
    const figure_case *c = &figure_cases[_i];
    char base[RU_PATH], dir[RU_PATH], pwn[RU_PATH], figs[RU_PATH], cmd[RU_PATH];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(pwn, sizeof pwn, "%s/pwn", base);
    ru_mkdir_p(pwn);
    ru_fmt(dir, sizeof dir, "%s/x'$(touch %s/a)'y", base, pwn);
    ru_fmt(figs, sizeof figs, "%s/x';touch %s/b;'", base, pwn);
    /* made without a shell, which would run the name */
    ru_fmt(cmd, sizeof cmd, "%s/tests/fixtures/compare/.", ru_src_root());
    ru_mkdir_p(dir); /* the name holds slashes: several folders */
    pid_t cp = fork();
    ck_assert(cp >= 0);
    if (cp == 0) {
        execlp("cp", "cp", "-r", cmd, dir, (char *)NULL);
        _exit(127);
    }
    int cst;
    ck_assert(waitpid(cp, &cst, 0) == cp && WIFEXITED(cst) && WEXITSTATUS(cst) == 0);
    write_trace_vars(dir);
    ru_mkdir_p(figs); /* attnlab makes the folder of the figures */
    /* gnuplot's single quotes: '' is a quote, nothing else is special */
    char expr[4 * RU_PATH], qdir[2 * RU_PATH], qfigs[2 * RU_PATH], script[RU_PATH];
    size_t o = 0;
    for (const char *p = dir; *p; p++)
        o += (size_t)sprintf(qdir + o, *p == '\'' ? "''" : "%c", *p);
    o = 0;
    for (const char *p = figs; *p; p++)
        o += (size_t)sprintf(qfigs + o, *p == '\'' ? "''" : "%c", *p);
    ru_fmt(expr, sizeof expr, "dir='%s'; figs='%s'", qdir, qfigs);
    ru_fmt(script, sizeof script, "%s/plots/%s.gp", ru_src_root(), c->script);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        freopen("/dev/null", "w", stdout);
        execlp("gnuplot", "gnuplot", "-e", expr, script, (char *)NULL);
        _exit(127);
    }
    int st;
    ck_assert(waitpid(pid, &st, 0) == pid);
    ck_assert_msg(ru_count_entries(pwn) == 0, "plots/%s.gp ran a path as a command", c->script);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "plots/%s.gp failed", c->script);
    for (size_t k = 0; c->figures[k]; k++) {
        char path[2 * RU_PATH];
        ru_fmt(path, sizeof path, "%s/%s.svg", figs, c->figures[k]);
        ck_assert_msg(access(path, F_OK) == 0, "plots/%s.gp wrote no %s", c->script, path);
    }
    ru_remove_tree(base);
}
END_TEST

/* ---- a token is drawn as written ----------------------------------------------------- */

/* Words a file task accepts that gnuplot would read as something else: a comment ('#'),
 * quotes, enhanced-text markup (_ ^ { } \ and a font change), XML's own characters, and
 * Chinese. The SVG writes & and < as entities; the test reads them back. */
static const char *const odd_words[] = {"#a",   "'",   "\"q",  "x_y^z", "{/=50",
                                        "b}",   "c\\d", "数据", "a&<b"};
enum { N_ODD = sizeof odd_words / sizeof odd_words[0] };

/* Writes a labelled matrix: corner, then the column labels, then one row per row label;
 * cell (i, j) is value(i, j). The labels are odd_words (rows: reversed) or unit numbers. */
static void write_odd_matrix(const char *path, const char *corner, size_t nr, size_t nc,
                             int units, double (*value)(size_t, size_t))
{
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(corner, f);
    for (size_t j = 0; j < nc; j++) {
        if (units)
            fprintf(f, "\t%zu", j);
        else
            fprintf(f, "\t%s", odd_words[j]);
    }
    for (size_t i = 0; i < nr; i++) {
        fprintf(f, "\n%s", odd_words[N_ODD - 1 - i]);
        for (size_t j = 0; j < nc; j++)
            fprintf(f, "\t%.4f", value(i, j));
    }
    fputc('\n', f);
    ck_assert(fclose(f) == 0);
}

/* Every cell its own value, 0.01 to 0.81: the attention figure prints each one. */
static double cell_value(size_t i, size_t j) { return 0.01 * (double)(i * N_ODD + j + 1); }
static double gate_value(size_t i, size_t j) { return 0.1 + 0.01 * (double)(i + j); }

/* The text elements of an SVG file, in order, without the tags inside them (enhanced
 * text is drawn as <tspan>s) and with XML's entities read back: n strings, each followed
 * by '\n', in buf. */
static size_t svg_texts(const char *path, char *buf, size_t cap)
{
    char *svg = ru_slurp_all(path, NULL);
    ck_assert_msg(svg != NULL, "cannot read %s", path);
    size_t o = 0, n = 0;
    for (const char *p = svg; (p = strstr(p, "<text")) != NULL; n++) {
        p = strchr(p, '>');
        ck_assert(p != NULL);
        const char *end = strstr(++p, "</text>");
        ck_assert(end != NULL);
        for (; p < end && o + 2 < cap; p++) {
            static const struct { const char *ent; char c; } ents[] = {
                {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
            if (*p == '<') { /* a tag inside the text: <tspan ...>, </tspan> */
                const char *close = strchr(p, '>');
                ck_assert(close != NULL && close < end);
                p = close;
                continue;
            }
            size_t k = 0;
            while (k < 5 && strncmp(p, ents[k].ent, strlen(ents[k].ent)) != 0)
                k++;
            if (k < 5) {
                buf[o++] = ents[k].c;
                p += strlen(ents[k].ent) - 1;
            } else {
                buf[o++] = *p;
            }
        }
        buf[o++] = '\n';
    }
    buf[o] = '\0';
    free(svg);
    return n;
}

/* Is every word of list (n of them, from step by step) a text element of texts, in order
 * and next to each other? */
static int has_run(const char *texts, const char *const *list, size_t n, int reversed)
{
    char want[1024] = "\n";
    for (size_t k = 0; k < n; k++) {
        strcat(want, list[reversed ? n - 1 - k : k]);
        strcat(want, "\n");
    }
    return strstr(texts, want) != NULL || strncmp(texts, want + 1, strlen(want + 1)) == 0;
}

START_TEST(every_token_is_drawn_as_written)
{
    char dir[] = "/tmp/attnlab-plots-XXXXXX", path[PATH_LEN];
    copy_fixture(dir);
    /* every trace of the fixture relabelled with the odd words */
    snprintf(path, sizeof path, "%s/trace/rnn_attention/alignment.tsv", dir);
    write_odd_matrix(path, "tgt\\src", N_ODD, N_ODD, 0, cell_value);
    static const char *const kinds[] = {"enc_self", "dec_self", "cross"};
    for (size_t k = 0; k < 3; k++)
        for (int l = 0; l < 2; l++)
            for (int h = 0; h < 2; h++) {
                snprintf(path, sizeof path, "%s/trace/transformer/%s.l%d.h%d.tsv", dir,
                         kinds[k], l, h);
                write_odd_matrix(path, k == 1 ? "tgt\\tgt" : "tgt\\src", N_ODD, N_ODD, 0,
                                 cell_value);
            }
    static const char *const gates[] = {"gate_i", "gate_f", "gate_o", "cell"};
    for (size_t g = 0; g < 4; g++)
        for (int half = 0; half < 2; half++) {
            snprintf(path, sizeof path, "%s/trace/lstm/%s.%s.tsv", dir, half ? "dec" : "enc",
                     gates[g]);
            write_odd_matrix(path, half ? "tgt\\unit" : "src\\unit", N_ODD, 6, 1, gate_value);
        }
    write_trace_vars(dir); /* as attnlab does once it has the traces */
    static char texts[1 << 16];
    /* the additive attention: every token on both axes, every cell's value */
    ck_assert_msg(draw(dir, "attention") == 0, "plots/attention.gp failed: %s",
                  peek(dir, "attention", "err"));
    snprintf(path, sizeof path, "%s/figures/attention_rnn.svg", dir);
    svg_texts(path, texts, sizeof texts);
    ck_assert_msg(has_run(texts, odd_words, N_ODD, 0), "the keys are not drawn as written:\n%s",
                  texts);
    ck_assert_msg(has_run(texts, odd_words, N_ODD, 1), "the queries are not drawn as "
                  "written:\n%s", texts);
    for (size_t i = 0; i < N_ODD; i++)
        for (size_t j = 0; j < N_ODD; j++) {
            char cell[32];
            snprintf(cell, sizeof cell, "\n%.2f\n", cell_value(i, j));
            ck_assert_msg(strstr(texts, cell), "cell (%zu, %zu) = %s is missing", i, j,
                          cell + 1);
        }
    /* the Transformer's grids: the tokens of both axes */
    for (size_t k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/figures/attention_%s.svg", dir, kinds[k]);
        svg_texts(path, texts, sizeof texts);
        ck_assert_msg(has_run(texts, odd_words, N_ODD, 0) && has_run(texts, odd_words, N_ODD, 1),
                      "attention_%s does not show the tokens as written:\n%s", kinds[k], texts);
    }
    /* the LSTM's gates: every step labelled with its token, in order */
    ck_assert_msg(draw(dir, "gates") == 0, "plots/gates.gp failed: %s", peek(dir, "gates", "err"));
    snprintf(path, sizeof path, "%s/figures/gates.svg", dir);
    svg_texts(path, texts, sizeof texts);
    ck_assert_msg(has_run(texts, odd_words, N_ODD, 1), "the gates' steps are not drawn as "
                  "written:\n%s", texts);
    remove_dir(dir);
}
END_TEST

/* ---- no script needs a shell ----------------------------------------------------------- */

/* Where there is no shell (gnuplot in WebAssembly, Windows) a script that asks one for
 * something stops there: no system(), no backquote, no data piped through a command
 * ("< cmd"). What the scripts would have asked attnlab writes for them. */
START_TEST(no_script_runs_a_shell)
{
    const figure_case *c = &figure_cases[_i];
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/plots/%s.gp", src_root(), c->script);
    char *text = ru_slurp(path, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    int line = 1;
    for (const char *p = text; *p; p++) {
        if (*p == '\n')
            line++;
        if (*p == '#') { /* a comment runs to the end of its line */
            const char *prev = p;
            while (prev > text && prev[-1] != '\n' && (prev[-1] == ' ' || prev[-1] == '\t'))
                prev--;
            if (prev == text || prev[-1] == '\n') {
                p += strcspn(p, "\n") - 1;
                continue;
            }
        }
        ck_assert_msg(strncmp(p, "system(", 7) != 0, "plots/%s.gp line %d calls system()",
                      c->script, line);
        ck_assert_msg(*p != '`', "plots/%s.gp line %d has a backquote (a shell command)",
                      c->script, line);
        ck_assert_msg(!((*p == '"' || *p == '\'') && p[1] == '<'),
                      "plots/%s.gp line %d reads data through a command (\"< ...\")",
                      c->script, line);
    }
    free(text);
}
END_TEST

/* ---- the SVG of an SVG-only run is the SVG of a PNG and SVG run ------------------------- */

/* The page in the browser draws SVG only (formats='svg'); attnlab report draws PNG then
 * SVG. A setting the PNG pass leaves behind must not reach the SVG: both must be the same
 * bytes. */
START_TEST(svg_alone_is_the_svg_drawn_after_png)
{
    const figure_case *c = &figure_cases[_i];
    char both[] = "/tmp/attnlab-plots-XXXXXX", alone[] = "/tmp/attnlab-plots-XXXXXX";
    copy_fixture(both);
    copy_fixture(alone);
    ck_assert_msg(draw_with(both, c->script, "formats='png svg'") == 0, "plots/%s.gp failed: %s",
                  c->script, peek(both, c->script, "err"));
    ck_assert_msg(draw_with(alone, c->script, "formats='svg'") == 0, "plots/%s.gp failed: %s",
                  c->script, peek(alone, c->script, "err"));
    for (size_t k = 0; c->figures[k]; k++) {
        char a[PATH_LEN], b[PATH_LEN];
        snprintf(a, sizeof a, "%s/figures/%s.png", alone, c->figures[k]);
        ck_assert_msg(access(a, F_OK) != 0, "formats='svg' wrote %s", a);
        snprintf(a, sizeof a, "%s/figures/%s.svg", alone, c->figures[k]);
        snprintf(b, sizeof b, "%s/figures/%s.svg", both, c->figures[k]);
        size_t la = 0, lb = 0;
        char *sa = ru_slurp(a, &la), *sb = ru_slurp(b, &lb);
        ck_assert_msg(sa && sb, "%s or %s was not written", a, b);
        size_t at = 0;
        while (at < la && at < lb && sa[at] == sb[at])
            at++;
        size_t line = 1;
        for (size_t i = 0; i < at; i++)
            line += sa[i] == '\n';
        ck_assert_msg(la == lb && at == la, "%s.svg: drawn alone it differs from the one "
                      "drawn after the PNG, from line %zu: \"%.80s\" against \"%.80s\"",
                      c->figures[k], line, sa + at, sb + at);
        free(sa);
        free(sb);
    }
    remove_dir(both);
    remove_dir(alone);
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
    char figs[RU_PATH + 16];
    ru_fmt(figs, sizeof figs, "%s/figures", dir);
    memset(s, 0, sizeof *s);
    DIR *d = opendir(figs);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        ck_assert(s->n < 32);
        char path[RU_PATH + 96];
        ru_fmt(s->name[s->n], 64, "%s", e->d_name);
        ru_fmt(path, sizeof path, "%s/%s", figs, e->d_name);
        s->bytes[s->n] = ru_slurp(path, &s->len[s->n]);
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
        ck_assert_msg(now.len[j] == s->len[i] &&
                          memcmp(now.bytes[j], s->bytes[i], s->len[i]) == 0,
                      "figures/%s changed (%zu bytes, %zu before)", s->name[i], now.len[j],
                      s->len[i]);
    }
    free_snapshot(&now);
}

START_TEST(full_disk_keeps_the_figures)
{
    char base[RU_PATH], out[RU_PATH + 8], fresh[RU_PATH + 8], run_dir[RU_PATH + 16];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(run_dir, sizeof run_dir, "%s/runs/good", base);
    ru_make_run(run_dir, NULL, 0);
    ru_fmt(out, sizeof out, "%s/out", base);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--out", out, run_dir, NULL}, NULL, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_result_free(&r);
    snapshot before;
    take_snapshot(out, &before);
    ck_assert_msg(before.n >= 8, "only %zu figure files drawn", before.n);

    /* the same report on a disk that takes no file beyond 24 kB: the tables fit, the
     * figures do not */
    ru_run(&r, (const char *const[]){"report", "--out", out, run_dir, NULL}, NULL, 24 << 10);
    ck_assert_msg(r.status == 1, "status %d on a full disk: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "figure accuracy was not drawn") ||
                      strstr(r.err, "plots/accuracy.gp "),
                  "the failed figure is not named: %s", r.err);
    ck_assert_msg(!strstr(r.out, "wrote"), "says it wrote a figure: %s", r.out);
    assert_same_figures(out, &before);
    ru_result_free(&r);
    free_snapshot(&before);

    /* and into a new directory: no figure at all rather than a broken one */
    ru_fmt(fresh, sizeof fresh, "%s/new", base);
    ru_run(&r, (const char *const[]){"report", "--out", fresh, run_dir, NULL}, NULL, 24 << 10);
    ck_assert_msg(r.status == 1, "status %d on a full disk: %s", r.status, r.err);
    snapshot none;
    take_snapshot(fresh, &none);
    ck_assert_msg(none.n == 0, "%zu figure files on a full disk, e.g. %s", none.n,
                  none.n ? none.name[0] : "");
    free_snapshot(&none);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

/* A copy of plots/ in dir/plots where script writes the given text instead. */
static void plots_with(const char *dir, const char *script, const char *text)
{
    char cmd[3 * RU_PATH], path[RU_PATH + 64];
    ru_fmt(cmd, sizeof cmd, "mkdir -p '%s/plots' && cp '%s'/plots/*.gp '%s/plots/'", dir,
           ru_src_root(), dir);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
    ru_fmt(path, sizeof path, "%s/plots/%s.gp", dir, script);
    ru_spit(path, text, strlen(text));
}

START_TEST(incomplete_or_failed_figures_are_errors)
{
    char base[RU_PATH], out[RU_PATH + 8], plots[RU_PATH + 8], run_dir[RU_PATH + 16];
    char path[RU_PATH + 64];
    ru_fresh_dir(base, sizeof base);
    ru_fmt(run_dir, sizeof run_dir, "%s/runs/good", base);
    ru_make_run(run_dir, NULL, 0);
    ru_fmt(out, sizeof out, "%s/out", base);
    ru_fmt(plots, sizeof plots, "%s/plots", base);
    /* curves.gp succeeds but leaves a PNG cut short and an SVG without its end */
    plots_with(base, "curves",
               "set print figs.\"/curves.png\"\nprint \"\\x89PNG\"\n"
               "set print figs.\"/curves.svg\"\nprint \"<svg>\"\nunset print\n");
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--out", out, run_dir, NULL}, plots, 0);
    ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "figure curves was not drawn: the PNG does not end with its "
                                "IEND chunk"), "%s", r.err);
    ru_fmt(path, sizeof path, "%s/figures/curves.png", out);
    ck_assert_msg(access(path, F_OK) != 0, "the broken figure was moved into place");
    ru_fmt(path, sizeof path, "%s/figures/accuracy.png", out);
    ck_assert_msg(access(path, F_OK) == 0, "the other figures were not drawn: %s", r.err);
    ru_fmt(path, sizeof path, "%s/report.html", out);
    char *html = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(html);
    ck_assert_msg(!strstr(html, "Training loss and teacher-forced"), "the page shows curves");
    ck_assert_msg(strstr(html, "Token and whole-sequence accuracy"), "the page lacks accuracy");
    free(html);
    ru_result_free(&r);

    /* gates.gp fails: one line names it, status 1 */
    plots_with(base, "gates", "exit status 3\n");
    ru_run(&r, (const char *const[]){"report", "--out", out, run_dir, NULL}, plots, 0);
    ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.err);
    ck_assert_msg(ru_count_lines_with(r.err, "plots/gates.gp exited with status 3") == 1, "%s",
                  r.err);
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

START_TEST(page_shows_only_the_figures_drawn)
{
    char base[RU_PATH], out[RU_PATH + 8], a[RU_PATH + 16], b[RU_PATH + 16];
    char cmd[3 * RU_PATH], path[RU_PATH + 64];
    ru_fresh_dir(base, sizeof base);
    /* run a: measured its cost and was traced; run b: neither */
    ru_fmt(a, sizeof a, "%s/runs/a", base);
    ru_make_run(a, NULL, 0);
    ru_fmt(cmd, sizeof cmd,
           "mkdir -p '%s/trace' && cp '%s'/tests/fixtures/compare/trace/lstm/*.tsv '%s/trace/'",
           a, ru_src_root(), a);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
    ru_fmt(b, sizeof b, "%s/runs/b", base);
    const ru_edit no_cost = {"cost.tsv", RU_DEL, NULL, 0, NULL};
    ru_make_run(b, &no_cost, 1);
    ru_fmt(out, sizeof out, "%s/out", base);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--out", out, a, NULL}, NULL, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ru_result_free(&r);
    ru_fmt(path, sizeof path, "%s/report.html", out);
    char *html = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(html);
    ck_assert_msg(strstr(html, "Cost against length") &&
                      strstr(html, "Gate activations (input, forget, output)"),
                  "the first page lacks the cost and gates figures");
    free(html);

    ru_run(&r, (const char *const[]){"report", "--out", out, b, NULL}, NULL, 0);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    html = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(html);
    ck_assert_msg(!strstr(html, "Cost against length"), "the page shows an old cost figure");
    ck_assert_msg(!strstr(html, "Gate activations (input, forget, output)"),
                  "the page shows old gates");
    ck_assert_msg(strstr(html, "Token and whole-sequence accuracy"), "the page lacks accuracy");
    free(html);
    /* the old trace copy is gone, so no figure is drawn from it; old figures stay */
    ru_fmt(path, sizeof path, "%s/trace/lstm", out);
    ck_assert_msg(access(path, F_OK) != 0, "the old trace copy is still in %s", path);
    ru_fmt(path, sizeof path, "%s/figures/cost.png", out);
    ck_assert_msg(access(path, F_OK) == 0, "an earlier figure was deleted");
    ru_result_free(&r);
    ru_remove_tree(base);
}
END_TEST

/* ---- the fixture has the columns docs/results-format.md names --------------------------- */

/* The files the figures read, and whether the documented columns are the whole header
 * (summary.tsv adds per-length columns after the documented ones). */
static const struct {
    const char *file;
    int prefix_only;
} documented[] = {
    {"accuracy.tsv", 0}, {"positions.tsv", 0},   {"curves.tsv", 0},
    {"budget.tsv", 0},   {"convergence.tsv", 0}, {"capacity.tsv", 0},
    {"cost.tsv", 0},     {"summary.tsv", 1},     {"manifest.tsv", 0},
    {"budget_at.tsv", 0}, {"distance.tsv", 0}, {"bleu.tsv", 0},
    {"sweep.tsv", 0},    {"compute.tsv", 0},
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
    if (!ru_have_gnuplot()) {
        printf("gnuplot not found: skipping figure rendering\n");
    } else {
        TCase *tc = tcase_create("render");
        tcase_add_loop_test(tc, test_script_draws, 0, N_FIGURE_CASES);
        tcase_add_test(tc, test_no_warnings);
        tcase_add_test(tc, test_variants_draw);
        tcase_add_test(tc, beyond_labelled_only_past_the_trained_range);
        tcase_add_loop_test(tc, test_missing_traces_skip, 0, N_FIGURE_CASES);
        tcase_add_loop_test(tc, test_paths_are_quoted_for_the_shell, 0, N_FIGURE_CASES);
        tcase_add_test(tc, every_token_is_drawn_as_written);
        tcase_add_loop_test(tc, svg_alone_is_the_svg_drawn_after_png, 0, N_FIGURE_CASES);
        tcase_set_timeout(tc, 120);
        suite_add_tcase(s, tc);
        tc = tcase_create("report");
        tcase_add_test(tc, full_disk_keeps_the_figures);
        tcase_add_test(tc, incomplete_or_failed_figures_are_errors);
        tcase_add_test(tc, page_shows_only_the_figures_drawn);
        tcase_set_timeout(tc, 300);
        suite_add_tcase(s, tc);
    }

    TCase *sh = tcase_create("shell");
    tcase_add_loop_test(sh, no_script_runs_a_shell, 0, N_FIGURE_CASES);
    suite_add_tcase(s, sh);

    TCase *fx = tcase_create("fixture");
    tcase_add_loop_test(fx, test_fixture_columns, 0,
                        (int)(sizeof documented / sizeof documented[0]));
    suite_add_tcase(s, fx);
    return s;
}
