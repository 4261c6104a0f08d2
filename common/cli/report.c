/* report.c — labelled matrices, and a comparison's figure variables and traces (see
 * report.h; drawing the figures is report_draw.c's, the web page report_page.c's).
 *
 * Design. figure_vars.gp is gnuplot code the figure scripts load, so what it holds is
 * limited to what cannot be code: numbers printed here, and strings — the model names,
 * the lengths — whose every character is a letter, a digit, a space or one of _.:=,+-
 * (gp_string). Inside gnuplot's double quotes none of these means anything (the
 * characters that do are the quote, the backslash and the backquote, which runs a shell
 * command), so a name that passed is a string and nothing else; one that did not is
 * refused, never escaped. The values come from run directories that rundir_load checked
 * against the registries, so a refusal here means a check was missed.
 *
 * The task's name is among them in single quotes: a file task is named after its file,
 * and a file may be called anything (数据.tsv, my data (2).tsv, a'b). Inside gnuplot's
 * single quotes only the quote means something, and it is written twice; the scripts
 * draw the name without enhanced text. It also goes to task.txt, one line of text.
 *
 * The scripts run without a shell (gnuplot in WebAssembly has none), so what they would
 * have asked one is written for them: which models have a trace (traced, in
 * figure_vars.gp) and, in trace_vars.gp beside each trace's copies, the labels of every
 * matrix as single-quoted strings and its numbers as a datablock: gnuplot's data reader
 * would take a label starting with '#' for a comment and one starting with '"' for a
 * quoted field, so the scripts never read a label as data.
 *
 * The traces are copied, not linked: a comparison directory holds its own copies. They
 * are gnuplot's data, so each copy is checked to be a labelled matrix of numbers with
 * text labels; the copies of an earlier report are removed first, so a figure never
 * shows a model this report does not. Removing and writing them never goes through a
 * symbolic link (safedir.h): a trace/ or trace/NAME/ that is one is refused.
 *
 * Every file is written whole or not at all (afile_write).
 */
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/afile.h"
#include "rundir.h"
#include "safedir.h"
#include "../core/task.h"
#include "../core/tsv.h"

/* ---- matrices ------------------------------------------------------------------------ */


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

/* Can s be written between gnuplot's double quotes as data: letters, digits, spaces and
 * _.:=,+- only? */
static int gp_string_ok(const char *s)
{
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              strchr(" _.:=,+-", c)))
            return 0;
    }
    return 1;
}

/* Writes s as the inside of a gnuplot string in single quotes: a quote doubled (''),
 * every other byte as it is, except a control character (a tab, a newline: text never
 * holds one where it is written from), which becomes '?'. Inside single quotes gnuplot
 * gives no other character a meaning: no backslash escape, no backquote command, no
 * @ macro. */
static void gp_squote_body(FILE *f, const char *s)
{
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '\'')
            fputs("''", f);
        else
            fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
    }
}

/* Writes s as a gnuplot string in single quotes (gp_squote_body). */
static void gp_squote(FILE *f, const char *s)
{
    fputc('\'', f);
    gp_squote_body(f, s);
    fputc('\'', f);
}

/* What figure_vars.gp is written from: the facts and the strings made of them. */
typedef struct vars_ctx {
    const report_facts *fx;
    const char *models;  /* the model names, space-separated */
    const char *lengths; /* the position lengths, space-separated */
    const char *task;    /* the task's name as the figures show it: any text */
    const char *traced;  /* the models whose out/trace/NAME/trace_vars.gp exists */
    const char *labels;  /* the models' labels, space-separated (NULL: none given) */
} vars_ctx;

/* Writes `name = "N N ..."`, the n numbers of v (plus add each), and a newline. */
static void write_numbers(FILE *f, const char *name, const size_t *v, size_t n, size_t add)
{
    fprintf(f, "%s = \"", name);
    for (size_t m = 0; m < n; m++)
        fprintf(f, m ? " %zu" : "%zu", v[m] + add);
    fputs("\"\n", f);
}

static int write_vars(FILE *f, const void *p)
{
    const vars_ctx *v = p;
    const config *cfg = v->fx->cfg;
    fprintf(f, "# written by attnlab report: the facts the figure scripts need\n");
    fprintf(f, "train_min = %zu\ntrain_max = %zu\n", cfg->train_min, cfg->train_max);
    fprintf(f, "symbols = %zu\nchance = 1.0 / symbols\nmodels = \"%s\"\n", cfg->symbols,
            v->models);
    fprintf(f, "position_lengths = \"%s\"\nseeds = %zu\n", v->lengths, v->fx->seeds);
    fputs("task = ", f);
    gp_squote(f, v->task);
    fprintf(f, "\ntraced = \"%s\"\n", v->traced);
    if (v->labels) { /* per model: what bleu.gp's legend and line styles need */
        const report_facts *fx = v->fx;
        fprintf(f, "labels = \"%s\"\n", v->labels);
        write_numbers(f, "trained_to", fx->trained_to, fx->n_models, 0);
        write_numbers(f, "kin", fx->kin, fx->n_models, 1); /* gnuplot counts from 1 */
        write_numbers(f, "capped", fx->capped, fx->n_models, 0);
    }
    if (v->fx->label_font) /* a Chinese report, with a font that draws Chinese */
        report_write_labels(f, v->fx->label_font);
    return ferror(f) ? -1 : 0;
}

/* Writes the string ctx and a newline. */
static int write_line(FILE *f, const void *ctx)
{
    fprintf(f, "%s\n", (const char *)ctx);
    return ferror(f) ? -1 : 0;
}

int report_write_vars(const char *out, const report_facts *fx, char *err, size_t n)
{
    size_t need = 1;
    for (size_t m = 0; m < fx->n_models; m++)
        need += strlen(fx->models[m]) + 1;
    char *models = malloc(need), *lengths = malloc(21 * fx->n_position_lengths + 1);
    char *traced = malloc(need), *labels = NULL;
    size_t need_labels = 1;
    for (size_t m = 0; fx->labels && m < fx->n_models; m++)
        need_labels += strlen(fx->labels[m]) + 1;
    if (fx->labels)
        labels = malloc(need_labels);
    if (!models || !lengths || !traced || (fx->labels && !labels)) {
        free(models);
        free(lengths);
        free(traced);
        free(labels);
        snprintf(err, n, "out of memory");
        return -1;
    }
    models[0] = '\0';
    for (size_t m = 0, at = 0; m < fx->n_models; m++)
        at += (size_t)sprintf(models + at, m ? " %s" : "%s", fx->models[m]);
    /* the models whose trace the figures can draw: report_copy_traces wrote its
     * trace_vars.gp (the scripts cannot ask whether a file exists) */
    traced[0] = '\0';
    for (size_t m = 0, at = 0; m < fx->n_models; m++) {
        char path[AFILE_PATH_MAX];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/trace/%s/trace_vars.gp", out, fx->models[m]) <
                (int)sizeof path &&
            stat(path, &st) == 0 && S_ISREG(st.st_mode))
            at += (size_t)sprintf(traced + at, at ? " %s" : "%s", fx->models[m]);
    }
    for (size_t m = 0, at = 0; labels && m < fx->n_models; m++)
        at += (size_t)sprintf(labels + at, m ? " %s" : "%s", fx->labels[m]);
    if (labels && fx->n_models == 0)
        labels[0] = '\0';
    lengths[0] = '\0';
    for (size_t k = 0, at = 0; k < fx->n_position_lengths; k++)
        at += (size_t)sprintf(lengths + at, k ? " %zu" : "%zu", fx->position_lengths[k]);
    char task_word[CONFIG_TASK_MAX];
    task_short_name(fx->cfg->task, task_word, sizeof task_word);
    int rc;
    if (fx->label_font && !gp_string_ok(fx->label_font)) {
        snprintf(err, n, "figure_vars.gp: the font's name is not passed to gnuplot "
                 "(accepted: letters, digits and _.:=,+-)");
        rc = -1;
    } else if (!gp_string_ok(models)) {
        char shown[100];
        snprintf(err, n, "figure_vars.gp: '%s' is not passed to gnuplot (accepted: letters, "
                 "digits and _.:=,+-)", rundir_printable(models, shown, sizeof shown));
        rc = -1;
    } else if (labels && !gp_string_ok(labels)) {
        char shown[100];
        snprintf(err, n, "figure_vars.gp: the labels '%s' are not passed to gnuplot "
                 "(accepted: letters, digits and _.:=,+-)",
                 rundir_printable(labels, shown, sizeof shown));
        rc = -1;
    } else {
        vars_ctx v = {fx, models, lengths, task_word, traced, labels};
        rc = afile_write(out, "figure_vars.gp", write_vars, &v, err, n);
    }
    if (rc == 0)
        rc = afile_write(out, "task.txt", write_line, task_word, err, n);
    free(models);
    free(lengths);
    free(traced);
    free(labels);
    return rc;
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

/* Is name a trace file report copies: letters, digits and _.- ending in .tsv? */
static int trace_name_ok(const char *name)
{
    const size_t l = strlen(name);
    if (l < 5 || l > 128 || strcmp(name + l - 4, ".tsv") != 0 || name[0] == '.')
        return 0;
    return name[strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                             "0123456789_.-")] == '\0';
}

/* Is the parsed table t a labelled matrix: text labels, numbers elsewhere, at least one
 * row and one column of numbers? Returns 0, or -1 with one line in err. */
static int matrix_ok(const tsv *t, const char *name, char *err, size_t n)
{
    if (t->rows == 0 || t->cols < 2) {
        snprintf(err, n, "%s: no matrix (a header of column labels, then rows)", name);
        return -1;
    }
    for (size_t r = 0; r <= t->rows; r++)
        for (size_t c = 0; c < t->cols; c++) {
            const char *s = t->cell[r * t->cols + c];
            double v;
            if (r == 0 || c == 0) {
                if (!rundir_is_text(s, NULL)) {
                    snprintf(err, n, "%s line %zu: a label holds a control character or a "
                             "byte that is not UTF-8", name, r + 1);
                    return -1;
                }
            } else if (tsv_number(t, r - 1, c, &v, err, n) != 0) {
                return -1;
            }
        }
    return 0;
}

/* Parses text (len bytes) into *t and checks it is a labelled matrix (matrix_ok).
 * Returns 0 (free *t after), or -1 with one line in err (nothing to free). */
static int matrix_parse(tsv *t, const char *text, size_t len, const char *name, char *err,
                        size_t n)
{
    char *copy = malloc(len + 1);
    if (!copy) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    /* tsv_parse takes copy over, also when it fails */
    if (tsv_parse(t, copy, len, name, err, n) != 0 || matrix_ok(t, name, err, n) != 0) {
        tsv_free(t);
        return -1;
    }
    return 0;
}

/* Is text (len bytes) a labelled matrix? Returns 0, or -1 with one line in err. */
static int trace_ok(const char *text, size_t len, const char *name, char *err, size_t n)
{
    tsv t;
    if (matrix_parse(&t, text, len, name, err, n) != 0)
        return -1;
    tsv_free(&t);
    return 0;
}

/* The trace files of one folder, for trace_vars.gp. */
typedef struct trace_vars_ctx {
    const char *dir;
    char (*names)[132]; /* sorted */
    size_t n;
} trace_vars_ctx;

static int by_name(const void *a, const void *b) { return strcmp(a, b); }

/* Writes the variables of one labelled matrix t, read from file name (X.tsv): with
 * stem tr_X (every character of X that is not a letter or a digit becomes _),
 *   tr_X_corner  the corner cell ("tgt\src")   tr_X_nx, tr_X_ny  columns and rows
 *   tr_X_cols    the column labels              tr_X_rows         the row labels
 *   $tr_X        the numbers, a datablock of ny lines of nx tab-separated cells
 * Labels are single-quoted strings (gp_squote), a list separated by tabs (a label never
 * holds one). The numbers are the file's own text, checked to be numbers (matrix_ok). */
static void write_matrix_vars(FILE *f, const tsv *t, const char *name)
{
    char stem[140] = "tr_";
    size_t k = 3;
    for (const char *p = name; *p && strcmp(p, ".tsv") != 0 && k < sizeof stem - 1; p++)
        stem[k++] = (char)(((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                            (*p >= '0' && *p <= '9')) ? *p : '_');
    stem[k] = '\0';
    fprintf(f, "%s_corner = ", stem);
    gp_squote(f, t->cell[0]);
    fprintf(f, "\n%s_cols = '", stem);
    for (size_t c = 1; c < t->cols; c++) {
        if (c > 1)
            fputc('\t', f);
        gp_squote_body(f, t->cell[c]);
    }
    fprintf(f, "'\n%s_rows = '", stem);
    for (size_t r = 1; r <= t->rows; r++) {
        if (r > 1)
            fputc('\t', f);
        gp_squote_body(f, t->cell[r * t->cols]);
    }
    fprintf(f, "'\n%s_nx = %zu\n%s_ny = %zu\n$%s << EOD\n", stem, t->cols - 1, stem,
            t->rows, stem);
    for (size_t r = 1; r <= t->rows; r++)
        for (size_t c = 1; c < t->cols; c++)
            fprintf(f, "%s%c", t->cell[r * t->cols + c], c + 1 < t->cols ? '\t' : '\n');
    fputs("EOD\n", f);
}

static int write_trace_vars(FILE *f, const void *p)
{
    const trace_vars_ctx *v = p;
    fputs("# written by attnlab: the labels and numbers of the trace matrices beside it,\n"
          "# for plots/attention.gp and plots/gates.gp (one stem tr_NAME per NAME.tsv)\n", f);
    for (size_t i = 0; i < v->n; i++) {
        char path[AFILE_PATH_MAX], why[512];
        size_t len = 0;
        char *text = afile_join(path, sizeof path, v->dir, v->names[i]) == 0
                         ? afile_read(path, TSV_MAX_BYTES, &len)
                         : NULL;
        tsv t;
        if (text && matrix_parse(&t, text, len, v->names[i], why, sizeof why) == 0) {
            write_matrix_vars(f, &t, v->names[i]);
            tsv_free(&t);
        }
        free(text); /* a file that is not a matrix has no variables */
    }
    return ferror(f) ? -1 : 0;
}

int report_write_trace_vars(const char *dir, char *err, size_t n)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, n, "cannot read %s: %s", dir, strerror(errno));
        return -1;
    }
    trace_vars_ctx v = {dir, NULL, 0};
    size_t cap = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (!trace_name_ok(e->d_name))
            continue;
        if (v.n == cap) {
            cap = cap ? 2 * cap : 32;
            char(*grown)[132] = realloc(v.names, cap * sizeof *v.names);
            if (!grown) {
                snprintf(err, n, "out of memory");
                rc = -1;
                break;
            }
            v.names = grown;
        }
        memcpy(v.names[v.n++], e->d_name, strlen(e->d_name) + 1); /* 128 bytes at most */
    }
    closedir(d);
    if (rc == 0) {
        qsort(v.names, v.n, sizeof *v.names, by_name); /* the same file from the same traces */
        rc = afile_write(dir, "trace_vars.gp", write_trace_vars, &v, err, n);
    }
    free(v.names);
    return rc;
}

/* Says on stderr that trace file path is left out, and why. */
static void leave_out(const char *path, const char *why)
{
    static char a[AFILE_PATH_MAX], b[2048];
    fprintf(stderr, "attnlab report: leaving out %s: %s\n",
            rundir_printable(path, a, sizeof a), rundir_printable(why, b, sizeof b));
}

/* Copies the trace matrices of run directory run into out/trace/name/. */
static int copy_trace(const char *run, const char *name, const char *out, char *err,
                      size_t n)
{
    char src[AFILE_PATH_MAX], root[AFILE_PATH_MAX], dst[AFILE_PATH_MAX];
    snprintf(src, sizeof src, "%s/trace", run);
    struct stat st;
    if (stat(src, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    if (safedir_enter(out, "trace", root, sizeof root, err, n) != 0 ||
        safedir_enter(root, name, dst, sizeof dst, err, n) != 0)
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
        char from[AFILE_PATH_MAX], why[512];
        if (afile_join(from, sizeof from, src, e->d_name) != 0)
            continue;
        if (!trace_name_ok(e->d_name)) {
            leave_out(from, "a trace is named with letters, digits and _.- only");
            continue;
        }
        size_t len = 0;
        char *text = afile_read(from, TSV_MAX_BYTES, &len);
        if (!text) {
            leave_out(from, "not a readable regular file");
            continue;
        }
        if (trace_ok(text, len, e->d_name, why, sizeof why) != 0) {
            leave_out(from, why);
        } else {
            copy_ctx cc = {text, len};
            rc = afile_write(dst, e->d_name, write_copy, &cc, err, n);
        }
        free(text);
    }
    closedir(d);
    return rc == 0 ? report_write_trace_vars(dst, err, n) : rc;
}

int report_check_out(const char *out, const report_facts *fx, char *err, size_t n)
{
    if (safedir_check(out, "figures", err, n) != 0 || safedir_check(out, "trace", err, n) != 0)
        return -1;
    for (size_t m = 0; m < fx->n_models; m++) {
        char sub[CONFIG_VALUE_MAX + 8];
        snprintf(sub, sizeof sub, "trace/%s", fx->models[m]);
        if (safedir_check(out, sub, err, n) != 0)
            return -1;
    }
    return 0;
}

int report_copy_traces(const char *out, const report_facts *fx, char *err, size_t n)
{
    /* the copies of an earlier report: every out/trace/NAME/X.tsv, then NAME/ once empty */
    if (safedir_clear(out, "trace", 1, ".tsv", err, n) != 0 ||
        safedir_clear(out, "trace", 1, "_vars.gp", err, n) != 0)
        return -1;
    for (size_t m = 0; m < fx->n_models; m++)
        if (copy_trace(fx->runs[m], fx->models[m], out, err, n) != 0)
            return -1;
    return 0;
}
