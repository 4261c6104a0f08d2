/* report.c — labelled matrices, and a comparison's figure variables, figures and web
 * page (see report.h).
 *
 * Design. The figure scripts (plots/NAME.gp) are the only place that knows what a figure
 * shows; this file knows their names, the figures each one draws and the caption the
 * page shows under them (the table `figures`), and passes every script one thing: the
 * comparison directory, as `gnuplot -e "dir='OUT'"`. The script reads figure_vars.gp and
 * the tables from there and skips, with a message, a figure whose files are missing.
 * Every file is written whole or not at all (afile_write); a failed script or a missing
 * gnuplot leaves the tables in place and says how to draw the figures later.
 */
#include "report.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "afile.h"
#include "buildinfo.h"
#include "tsv.h"

/* ---- matrices ------------------------------------------------------------------------ */


int report_write_matrix(FILE *f, const gsl_matrix *m, const char (*rows)[16],
                        const char (*cols)[16], const char *corner)
{
    fprintf(f, "%s", corner);
    for (size_t j = 0; j < m->size2; j++)
        fprintf(f, "\t%s", cols[j]);
    fputc('\n', f);
    for (size_t i = 0; i < m->size1; i++) {
        fprintf(f, "%s", rows[i]);
        for (size_t j = 0; j < m->size2; j++)
            fprintf(f, "\t%.6g", gsl_matrix_get(m, i, j));
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

void report_print_matrix(FILE *f, const char *title, const gsl_matrix *m,
                         const char (*rows)[16], const char (*cols)[16])
{
    fprintf(f, "%s (%zu x %zu)\n%8s", title, m->size1, m->size2, "");
    for (size_t j = 0; j < m->size2; j++)
        fprintf(f, " %6.6s", cols[j]);
    fputc('\n', f);
    for (size_t i = 0; i < m->size1; i++) {
        fprintf(f, "%8.8s", rows[i]);
        for (size_t j = 0; j < m->size2; j++)
            fprintf(f, " %6.3f", gsl_matrix_get(m, i, j));
        fputc('\n', f);
    }
    fputc('\n', f);
}

/* ---- figure variables and traces ----------------------------------------------------- */

static int write_vars(FILE *f, const void *p)
{
    const report_facts *fx = p;
    const config *cfg = fx->cfg;
    fprintf(f, "# written by attnlab report: the facts the figure scripts need\n");
    fprintf(f, "train_min = %zu\ntrain_max = %zu\n", cfg->train_min, cfg->train_max);
    fprintf(f, "symbols = %zu\nchance = 1.0 / symbols\ntask = \"%s\"\nmodels = \"", cfg->symbols,
            cfg->task);
    for (size_t m = 0; m < fx->n_models; m++)
        fprintf(f, m ? " %s" : "%s", fx->models[m]);
    fprintf(f, "\"\nposition_lengths = \"");
    for (size_t k = 0; k < fx->n_position_lengths; k++)
        fprintf(f, k ? " %zu" : "%zu", fx->position_lengths[k]);
    fprintf(f, "\"\nseeds = %zu\n", fx->seeds);
    return ferror(f) ? -1 : 0;
}

int report_write_vars(const char *out, const report_facts *fx, char *err, size_t n)
{
    return afile_write(out, "figure_vars.gp", write_vars, fx, err, n);
}

typedef struct copy_ctx {
    const char *text;
    size_t len;
} copy_ctx;

static int write_copy(FILE *f, const void *p)
{
    const copy_ctx *c = p;
    return fwrite(c->text, 1, c->len, f) == c->len ? 0 : -1;
}

/* Copies the trace matrices of run directory run into out/trace/name/. */
static int copy_trace(const char *run, const char *name, const char *out, char *err,
                      size_t n)
{
    char src[AFILE_PATH_MAX], dst[AFILE_PATH_MAX];
    snprintf(src, sizeof src, "%s/trace", run);
    struct stat st;
    if (stat(src, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    snprintf(dst, sizeof dst, "%s/trace/%s", out, name);
    if (afile_mkdirs(dst, err, n) != 0)
        return -1;
    DIR *d = opendir(src);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        const size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".tsv") != 0)
            continue;
        char from[AFILE_PATH_MAX];
        if (afile_join(from, sizeof from, src, e->d_name) != 0)
            continue;
        size_t len = 0;
        char *text = afile_read(from, TSV_MAX_BYTES, &len);
        if (!text)
            continue;
        copy_ctx cc = {text, len};
        rc = afile_write(dst, e->d_name, write_copy, &cc, err, n);
        free(text);
    }
    closedir(d);
    return rc;
}

int report_copy_traces(const char *out, const report_facts *fx, char *err, size_t n)
{
    for (size_t m = 0; m < fx->n_models; m++)
        if (copy_trace(fx->runs[m], fx->models[m], out, err, n) != 0)
            return -1;
    return 0;
}

/* ---- the figures --------------------------------------------------------------------- */

/* Is path an existing regular file? */
static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

const char *report_plots_dir(void)
{
    static char dir[AFILE_PATH_MAX];
    char probe[AFILE_PATH_MAX + 32];
    const char *env = getenv("ATTNLAB_PLOTS");
    if (env && *env) {
        snprintf(dir, sizeof dir, "%s", env);
        return dir;
    }
    /* next to the program: build/attnlab, build/san/attnlab, PREFIX/bin/attnlab */
    char exe[AFILE_PATH_MAX];
    if (buildinfo_self_path(exe, sizeof exe) != 0)
        return NULL;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    static const char *const rel[] = {"/../plots", "/../../plots", "/../share/attnlab/plots"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(dir, sizeof dir, "%s%s", exe, rel[i]);
        snprintf(probe, sizeof probe, "%s/accuracy.gp", dir);
        if (is_file(probe))
            return dir;
    }
    return NULL;
}

/* The figure scripts, each with the sentence the page shows under its figures. */
static const struct figure {
    const char *script;     /* plots/NAME.gp */
    const char *outputs[4]; /* figures it draws (without extension) */
    const char *caption;
} figures[] = {
    {"accuracy", {"accuracy"},
     "Token and whole-sequence accuracy against sequence length (mean over seeds, band: "
     "min-max). The shaded band is the training range; the dashed line is chance. Look "
     "for the LSTM falling as the distance it must carry each symbol grows, while the "
     "attention models stay high inside the training range."},
    {"positions", {"positions"},
     "Accuracy at each output position for a few lengths: where in the sequence each "
     "model fails. Look at how the LSTM's accuracy falls along the output once the "
     "sequence outgrows what its state can hold, while the attention models stay flat "
     "inside the training range."},
    {"curves", {"curves"},
     "Training loss and teacher-forced token accuracy against step and against seconds: "
     "how fast each model learns, per step and per unit of compute time."},
    {"attention",
     {"attention_rnn", "attention_enc_self", "attention_dec_self", "attention_cross"},
     "Attention weights for one example. Additive attention: row t is where output t "
     "looked; copying gives a diagonal. Transformer: encoder self-attention (every position "
     "sees every position), masked decoder self-attention (the upper triangle is empty: no "
     "position sees its future) and encoder-decoder attention, per layer and head."},
    {"gates", {"gates"},
     "LSTM gate activations (input, forget, output) and the cell state over the steps of "
     "one example: the LSTM's own, step-by-step way of choosing what to keep."},
    {"cost", {"cost"},
     "Cost against length, log-log: measured training time per sequence and analytic "
     "FLOPs. The recurrence grows like L, attention over all pairs like L squared."},
};
#define N_FIGURES (sizeof figures / sizeof figures[0])

/* Runs gnuplot -e "dir='out'" script. Returns its exit status, or -1 when gnuplot could
 * not be started. */
static int run_gnuplot(const char *plots, const char *script, const char *out)
{
    char path[AFILE_PATH_MAX], expr[AFILE_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/%s.gp", plots, script);
    snprintf(expr, sizeof expr, "dir='%s'", out);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execlp("gnuplot", "gnuplot", "-e", expr, path, (char *)NULL);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st) == 127 ? -1 : WEXITSTATUS(st);
}

int report_draw(const char *out, const report_facts *fx, FILE *f, char *err, size_t n)
{
    char figdir[AFILE_PATH_MAX];
    snprintf(figdir, sizeof figdir, "%s/figures", out);
    if (afile_mkdirs(figdir, err, n) != 0)
        return -1;
    const char *plots = report_plots_dir();
    if (!plots) {
        fprintf(stderr, "attnlab report: the figure scripts (plots/) were not found; set "
                "ATTNLAB_PLOTS to their directory and run attnlab report again\n");
        return 0;
    }
    int missing = 0, drawn[N_FIGURES] = {0};
    for (size_t k = 0; k < N_FIGURES && !missing; k++) {
        if (strcmp(figures[k].script, "cost") == 0 && !fx->have_cost) {
            fprintf(stderr, "attnlab report: no run measured its cost (train "
                    "--cost-lengths): no cost figure\n");
            continue;
        }
        int st = run_gnuplot(plots, figures[k].script, out);
        drawn[k] = st == 0;
        if (st < 0) {
            missing = 1;
            fprintf(stderr, "attnlab report: gnuplot not found: the tables are in %s; "
                    "draw the figures later with: gnuplot -e \"dir='%s'\" %s/NAME.gp "
                    "(one per script)\n", out, out, plots);
        } else if (st != 0) {
            fprintf(stderr, "attnlab report: %s/%s.gp failed (status %d)\n", plots,
                    figures[k].script, st);
        }
    }
    if (!missing) {
        fprintf(f, "figures drawn in %s/figures/ by:", out);
        for (size_t k = 0; k < N_FIGURES; k++)
            if (drawn[k])
                fprintf(f, " %s.gp", figures[k].script);
        fputc('\n', f);
    }
    return 0;
}

/* ---- the page ------------------------------------------------------------------------ */

/* Escapes text for HTML. */
static void html_text(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
}

/* Writes a TSV file as an HTML table (nothing when it cannot be read). */
static void html_table(FILE *f, const char *path)
{
    tsv t;
    char err[256];
    if (tsv_read(&t, path, err, sizeof err) != 0)
        return;
    fputs("<table>\n<tr>", f);
    for (size_t c = 0; c < t.cols; c++) {
        fputs("<th>", f);
        html_text(f, t.cell[c]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (size_t r = 0; r < t.rows; r++) {
        fputs("<tr>", f);
        for (size_t c = 0; c < t.cols; c++) {
            fputs("<td>", f);
            html_text(f, tsv_get(&t, r, c));
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
    tsv_free(&t);
}

typedef struct page_ctx {
    const char *out;
    const char *manifest;
} page_ctx;

/* The self-contained page: figures inline as SVG, the summary, the manifest. */
static int write_page(FILE *f, const void *p)
{
    const page_ctx *c = p;
    char path[AFILE_PATH_MAX];
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<title>attnlab comparison</title>\n<style>\n"
          "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;"
          "color:#222}\n"
          "figure{margin:2em 0}figcaption{color:#444;margin-top:.5em}\n"
          "svg{max-width:100%;height:auto}\n"
          "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;"
          "padding:.2em .5em;text-align:right}th{background:#f4f4f4}\n"
          "</style>\n</head>\n<body>\n<h1>Why attention replaced the LSTM: one comparison</h1>\n"
          "<p>Each model was trained on the same sequences with the same seed, steps and "
          "batch size; accuracy is measured by greedy decoding on fresh sequences at every "
          "length, inside the training range and beyond it.</p>\n<h2>Summary</h2>\n", f);
    afile_join(path, sizeof path, c->out, "summary.tsv");
    html_table(f, path);
    fputs("<h2>Figures</h2>\n", f);
    for (size_t k = 0; k < N_FIGURES; k++) {
        int shown = 0;
        for (size_t o = 0; o < 4 && figures[k].outputs[o]; o++) {
            char name[128];
            snprintf(name, sizeof name, "figures/%s.svg", figures[k].outputs[o]);
            afile_join(path, sizeof path, c->out, name);
            char *svg = afile_read(path, TSV_MAX_BYTES, NULL);
            if (!svg)
                continue;
            /* inline SVG: drop the XML prolog and doctype, keep the <svg> element */
            const char *start = strstr(svg, "<svg");
            if (start) {
                fputs(shown ? "" : "<figure>\n", f);
                fputs(start, f);
                fputc('\n', f);
                shown = 1;
            }
            free(svg);
        }
        if (shown) {
            fputs("<figcaption>", f);
            html_text(f, figures[k].caption);
            fputs("</figcaption>\n</figure>\n", f);
        }
    }
    if (c->manifest) {
        fputs("<h2>Manifest</h2>\n", f);
        html_table(f, c->manifest);
    }
    fputs("</body>\n</html>\n", f);
    return ferror(f) ? -1 : 0;
}

int report_write_page(const char *out, char *err, size_t n)
{
    char manifest[AFILE_PATH_MAX];
    afile_join(manifest, sizeof manifest, out, "manifest.tsv");
    page_ctx pc = {out, is_file(manifest) ? manifest : NULL};
    return afile_write(out, "report.html", write_page, &pc, err, n);
}
