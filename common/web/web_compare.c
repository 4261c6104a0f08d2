/* web_compare.c — the page's comparisons: runs merged into the tables its figure scripts
 * read, while they train and once they are done, a checkpoint's run made readable to
 * the merge, and the captions of the figures (prefix: page_).
 *
 * Design. The page draws the command line's figures with the command line's scripts
 * (plots/NAME.gp, in gnuplot compiled to WebAssembly), so what the scripts read is
 * written by the command line's own code: summary_merge for finished runs,
 * summary_merge_training for runs still training (common/cli/summary.h). Nothing here
 * computes a table. A run opened from a checkpoint has no training: its directory holds
 * config.tsv, the evaluation and the trace, and the merge also needs build.tsv (the
 * parameters) and train_log.tsv, so page_stage writes a copy of the run with those two
 * files, saying no more than the checkpoint knows (the parameters, and a log without a
 * row), apart from the run's own directory, whose download stays what the run holds.
 * Part of the page's entry point (web_run.h).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../cli/report.h"
#include "../cli/summary.h"
#include "../core/afile.h"
#include "../core/config.h"
#include "../core/model.h"
#include "../core/train.h"
#include "web_page.h"
#include "web_run.h"

/* The registry (attnlab.c): every model, NULL-terminated. */
extern const model_ops *const model_registry[];

/* The largest file of a run page_stage copies (an evaluation, a matrix of a trace). */
#define PAGE_COPY_MAX (64u << 20)

/* Merges the directories of runs (one path a line) into out with summary_merge, or
 * with summary_merge_training when training is set. Returns 0, or -1 with page_err. */
static int page_merge(const char *runs, const char *out, int training)
{
    char *copy = strdup(runs);
    size_t n = 0;
    const char **dirs = malloc((strlen(runs) / 2 + 2) * sizeof *dirs);
    if (!copy || !dirs) {
        free(copy);
        free(dirs);
        snprintf(page_err, sizeof page_err, "out of memory");
        return -1;
    }
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        dirs[n++] = line;
    page_err[0] = '\0';
    const int rc = training ? summary_merge_training(dirs, n, out, page_err, sizeof page_err)
                            : summary_merge(dirs, n, out, page_err, sizeof page_err);
    free(copy);
    free(dirs);
    return rc;
}

int page_compare(const char *runs, const char *out) { return page_merge(runs, out, 0); }

int page_curves(const char *runs, const char *out) { return page_merge(runs, out, 1); }

/* ---- a checkpoint's run, as the merge reads it ----------------------------------------- */

typedef struct page_bytes {
    const char *p;
    size_t n;
} page_bytes;

static int page_write_bytes(FILE *f, const void *ctx)
{
    const page_bytes *b = ctx;
    return fwrite(b->p, 1, b->n, f) == b->n ? 0 : -1;
}

/* Copies from/name to to/name. Returns 0, or -1 with page_err. */
static int page_copy(const char *from, const char *to, const char *name)
{
    char path[AFILE_PATH_MAX];
    if (afile_join(path, sizeof path, from, name) != 0) {
        snprintf(page_err, sizeof page_err, "path too long: %.200s/%.200s", from, name);
        return -1;
    }
    size_t n = 0;
    char *text = afile_read(path, PAGE_COPY_MAX, &n);
    if (!text) {
        snprintf(page_err, sizeof page_err, "cannot read %.400s", path);
        return -1;
    }
    const page_bytes b = {text, n};
    const int rc = afile_write(to, name, page_write_bytes, &b, page_err, sizeof page_err);
    free(text);
    return rc;
}

/* Copies every regular file of from/trace into to/trace (none when there is no trace
 * yet). Returns 0, or -1 with page_err. */
static int page_copy_trace(const char *from, const char *to)
{
    char src[AFILE_PATH_MAX], dst[AFILE_PATH_MAX];
    if (afile_join(src, sizeof src, from, "trace") != 0 ||
        afile_join(dst, sizeof dst, to, "trace") != 0) {
        snprintf(page_err, sizeof page_err, "path too long: %.400s", from);
        return -1;
    }
    DIR *d = opendir(src);
    if (!d)
        return 0;
    int rc = afile_mkdirs(dst, page_err, sizeof page_err);
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        char path[AFILE_PATH_MAX];
        struct stat st;
        if (e->d_name[0] == '.' || afile_join(path, sizeof path, src, e->d_name) != 0 ||
            stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        rc = page_copy(src, dst, e->d_name);
    }
    closedir(d);
    return rc;
}

static int page_write_config(FILE *f, const void *c) { return config_write_tsv(c, f); }

static int page_write_params(FILE *f, const void *ctx)
{
    fprintf(f, "key\tvalue\nparameters\t%zu\n", *(const size_t *)ctx);
    return ferror(f) ? -1 : 0;
}

static int page_write_log_header(FILE *f, const void *ctx)
{
    (void)ctx;
    train_log_header(f);
    return ferror(f) ? -1 : 0;
}

/* Writes into out the run directory summary_merge reads of run h, a run opened from a
 * checkpoint and evaluated: its config.tsv, eval.tsv, eval_positions.tsv and trace/
 * (the last input decoded, when there is one), a build.tsv that gives its parameters
 * alone and a train_log.tsv without a row (a checkpoint carries no training). Returns 0,
 * or -1 with page_error(): a run trained here (its own directory is read as it is), or
 * one not yet evaluated. */
int page_stage(int h, const char *out)
{
    page_run *p = page_get(h);
    if (!p)
        return -1;
    if (p->trained) {
        snprintf(page_err, sizeof page_err, "run %d was trained here: the merge reads its own "
                 "directory, %.400s", h, p->dir);
        return -1;
    }
    const size_t params = p->m->params.size;
    if (afile_mkdirs(out, page_err, sizeof page_err) != 0 ||
        afile_write(out, "config.tsv", page_write_config, &p->c, page_err, sizeof page_err) ||
        page_copy(p->dir, out, "eval.tsv") != 0 ||
        page_copy(p->dir, out, "eval_positions.tsv") != 0 || page_copy_trace(p->dir, out) ||
        afile_write(out, "build.tsv", page_write_params, &params, page_err, sizeof page_err) ||
        afile_write(out, "train_log.tsv", page_write_log_header, NULL, page_err,
                    sizeof page_err))
        return -1;
    return 0;
}

/* ---- the captions ------------------------------------------------------------------------ */

const char *page_figures(void)
{
    static char *text;
    size_t len = 0;
    if (text)
        return text;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return "";
    for (size_t k = 0; k < REPORT_N_FIGURES; k++) {
        const report_figure *fig = &report_figures[k];
        fprintf(f, "figure\t%s\t", fig->script);
        for (size_t o = 0; o < 4 && fig->outputs[o]; o++)
            fprintf(f, o ? " %s" : "%s", fig->outputs[o]);
        fprintf(f, "\t%s\t%s\n", fig->caption, fig->caption_zh);
    }
    for (const model_ops *const *ops = model_registry; *ops; ops++)
        for (const model_trace_kind *k = (*ops)->traces; k && k->prefix; k++)
            if (k->about)
                fprintf(f, "trace\t%s\t%s\t%s\t%s\n", (*ops)->name, k->figure, k->about,
                        k->about_zh ? k->about_zh : k->about);
    fclose(f);
    return text ? text : "";
}
