/* web_page.c — the browser page's entry point: a run made from settings, trained a chunk
 * at a time, finished, evaluated, asked to decode an input, or opened from a checkpoint
 * trained on the command line (prefix: page_).
 *
 * Design. A front-end of the core, like the command line and web_check.c: it reaches the
 * models only through model.h and the registry (attnlab.c built with ATTNLAB_NO_MAIN),
 * and uses only what every front-end compiles (no processes, signals, locks, dlsym or
 * gnuplot). The page runs it in a Web Worker, one run per Worker, and talks to it through
 * the functions below (exported from the WebAssembly module; every string is UTF-8, every
 * path one of emscripten's in-memory file system, which the page reads and writes with
 * FS.readFile and FS.writeFile). A run is a directory there, written in the command
 * line's formats (docs/results-format.md), so a run downloaded from the page is read by
 * `attnlab eval` and `attnlab report` as one trained by `attnlab train`.
 *
 * The same bits as `attnlab train`. A run's configuration is built as the command line
 * builds it (config_defaults, the model's defaults, then each setting through
 * config_set, and for a data file what the file decides: its vocabulary, its CRC-32 and,
 * unless given, the training range). Training is train_run itself, called once per
 * chunk: a chunk always ends at a step that validates (its pause hook sets the stop flag
 * there), so every interval of train_log.tsv is averaged over the same steps as the
 * command line's, the generators, Adam's moments and the best validation carry over from
 * one call to the next, and the weights after the last chunk are those of one call.
 * tests/web/page.js trains through this file under node and `make check-web` compares its
 * model.ckpt and last.ckpt with the native program's, byte for byte.
 *
 * Between two chunks the Worker reads its messages: that is where the page's "stop"
 * takes effect. The run then finishes with the weights it has; build.tsv says "budget"
 * with the train_steps it ran, as for a run that ran out of steps.
 *
 * Files of a run (dir): args.txt and config.tsv at creation; train_log.tsv after every
 * chunk; last.ckpt, model.ckpt (the best validation's weights) and build.tsv by
 * page_finish; eval.tsv and eval_positions.tsv by page_evaluate; trace/NAME.tsv, the
 * matrices of the last input page_decode was given. It is portable C: the same file
 * builds natively (make build/common/web/web_page.o).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/afile.h"
#include "../cli/buildinfo.h"
#include "../core/checkpoint.h"
#include "../core/config.h"
#include "../core/dataset.h"
#include "../core/eval.h"
#include "../core/model.h"
#include "../core/optim.h"
#include "../core/rng.h"
#include "../core/task.h"
#include "../core/train.h"
#include "web_page.h"
#include "web_run.h"

/* The registry (attnlab.c): every model, NULL-terminated. */
extern const model_ops *const model_registry[];

/* ---- runs ------------------------------------------------------------------------------- */

static void page_run_free(page_run *p)
{
    if (!p)
        return;
    if (p->m)
        p->m->ops->free(p->m);
    optim_free(&p->o);
    rng_close(&p->r);
    free(p->best.w);
    if (p->log)
        fclose(p->log);
    free(p->log_buf);
    free(p);
}

/* A new run slot, or NULL with page_err. */
static page_run *page_new(const char *dir, int *h)
{
    int k = 0;
    while (k < PAGE_RUNS_MAX && page_runs[k])
        k++;
    if (k == PAGE_RUNS_MAX) {
        snprintf(page_err, sizeof page_err, "%d runs are open already: close one", PAGE_RUNS_MAX);
        return NULL;
    }
    page_run *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(page_err, sizeof page_err, "out of memory");
        return NULL;
    }
    if (snprintf(p->dir, sizeof p->dir, "%s", dir) >= (int)sizeof p->dir ||
        afile_mkdirs(dir, page_err, sizeof page_err) != 0) {
        if (!page_err[0])
            snprintf(page_err, sizeof page_err, "directory name too long: %s", dir);
        free(p);
        return NULL;
    }
    *h = k + 1;
    return p;
}

static int page_write_text(FILE *f, const void *ctx)
{
    const char *s = ctx;
    return fputs(s, f) < 0 ? -1 : 0;
}

static int page_write_config(FILE *f, const void *c) { return config_write_tsv(c, f); }

/* Creates a run in directory dir (made when missing) from settings (page_configure: one
 * key=value per word; model, task copy, reverse or file:PATH, train_min, train_max, sizes,
 * seed, steps, stop_acc, ..., eval_lengths, samples), with its model initialised from the
 * seed as `attnlab train` does, and writes dir/args.txt and dir/config.tsv. A data file
 * (task=file:PATH) is read from PATH, relative to the current directory. Returns the run's
 * handle (1 or more), or 0 with one line in page_error(). */
int page_create(const char *dir, const char *settings)
{
    int h = 0;
    page_err[0] = '\0';
    page_run *p = page_new(dir, &h);
    if (!p)
        return 0;
    char *args_text = NULL;
    size_t args_len = 0;
    FILE *args = open_memstream(&args_text, &args_len);
    if (!args) {
        snprintf(page_err, sizeof page_err, "out of memory");
        page_run_free(p);
        return 0;
    }
    int rc = page_configure(p, settings, args);
    /* the command line's args.txt also holds --out DIR: the directory's own name */
    const char *base = strrchr(dir, '/');
    fprintf(args, "--out\n%s\n", base && base[1] ? base + 1 : dir);
    fclose(args);
    if (rc == 0 && (afile_write(dir, "args.txt", page_write_text, args_text, page_err,
                                sizeof page_err) != 0 ||
                    afile_write(dir, "config.tsv", page_write_config, &p->c, page_err,
                                sizeof page_err) != 0))
        rc = -1;
    free(args_text);
    const config *c = &p->c;
    if (rc == 0) {
        const model_ops *ops = model_lookup(c->model);
        if (rng_open(&p->r, c->seed) != 0 || !(p->m = ops->alloc(c)) ||
            optim_alloc(&p->o, p->m->params.size, c->beta1, c->beta2, c->eps) != 0 ||
            !(p->best.w = malloc(p->m->params.size * sizeof *p->best.w)) ||
            !(p->log = open_memstream(&p->log_buf, &p->log_len))) {
            snprintf(page_err, sizeof page_err, "out of memory building %s", c->model);
            rc = -1;
        }
    }
    if (rc != 0) {
        page_run_free(p);
        return 0;
    }
    p->m->ops->init(p->m, p->r.s[RNG_INIT]);
    /* the best weights are the initial ones until a validation says otherwise */
    memcpy(p->best.w, p->m->params.data, p->m->params.size * sizeof *p->best.w);
    train_log_header(p->log);
    p->trained = 1;
    page_runs[h - 1] = p;
    return h;
}

/* The pause hook (train_hooks.checkpoint, called after every step): once the chunk has
 * run its steps, stop at the first step that validates, so that the chunk ends on a
 * log line. */
static int page_pause(void *ctx, size_t step, const optim *o)
{
    page_run *p = ctx;
    (void)o;
    if (step >= p->pause_at && train_validates_at(&p->c, step))
        p->stop = 1;
    return 0;
}

static int page_write_log(FILE *f, const void *ctx)
{
    const page_run *p = ctx;
    fflush(p->log);
    return fwrite(p->log_buf, 1, p->log_len, f) == p->log_len ? 0 : -1;
}

/* Trains run h for at least steps more steps (fewer when the cap or the stopping rule
 * comes first), then on to the next step that validates, and writes dir/train_log.tsv
 * (every line so far; its last line is the progress: step, seconds, lr, loss, token_acc,
 * ...). Returns 0 when there is more to train, 1 when training is over (every step run,
 * the target accuracy reached or a plateau), or -1 with one line in page_error() (a
 * divergence: training is over, and the weights are those of the last good step). */
int page_train(int h, int steps)
{
    page_run *p = page_get(h);
    if (!p)
        return -1;
    if (!p->trained) {
        snprintf(page_err, sizeof page_err, "run %d was opened from a checkpoint: it is not "
                 "trained here", h);
        return -1;
    }
    if (p->done)
        return 1;
    char err[PAGE_ERR_MAX];
    const task *t = task_open(&p->c, err, sizeof err);
    if (!t) {
        snprintf(page_err, sizeof page_err, "%s", err);
        return -1;
    }
    p->stop = 0;
    p->pause_at = p->step + (steps > 0 ? (size_t)steps : 1);
    train_hooks hooks = {&p->stop, 1, page_pause, p, p->seconds, NULL, NULL};
    train_summary ts;
    const int tr = train_run(p->m, t, &p->c, &p->r, &p->o, p->step + 1, p->log, TRAIN_QUIET,
                             &hooks, &p->best, &ts, err, sizeof err);
    task_close(t);
    p->step = ts.steps;
    p->seconds += ts.seconds;
    int rc = tr == TRAIN_STOPPED ? 0 : 1;
    if (tr == TRAIN_FAILED) {
        snprintf(page_err, sizeof page_err, "%s", err);
        rc = -1;
    }
    if (tr != TRAIN_STOPPED) {
        p->done = 1;
        p->early = ts.early;
    }
    if (afile_write(p->dir, "train_log.tsv", page_write_log, p, err, sizeof err) != 0) {
        snprintf(page_err, sizeof page_err, "%s", err);
        return -1;
    }
    return rc;
}

/* The facts of a run besides its configuration (build.tsv), written by the code
 * `attnlab train` writes them with (train_write_build). */
static int page_write_build(FILE *f, const void *ctx)
{
    const page_run *p = ctx;
    const train_summary ts = {.steps = p->step, .seconds = p->seconds, .early = p->early};
    return train_write_build(f, buildinfo_write_tsv, p->m->params.size, &ts, &p->best);
}

/* Ends the training of run h where it is (after a "stop", or when page_train said it is
 * over) and writes what `attnlab train` writes after training: train_log.tsv, last.ckpt
 * (the weights after the last step), model.ckpt (those of the best validation, which the
 * run keeps from here on) and build.tsv. Returns 0, or -1 with page_error(). */
int page_finish(int h)
{
    page_run *p = page_get(h);
    if (!p)
        return -1;
    if (!p->trained || p->step == 0) {
        snprintf(page_err, sizeof page_err, "run %d has no training to finish", h);
        return -1;
    }
    char path[AFILE_PATH_MAX];
    p->done = 1;
    if (afile_write(p->dir, "train_log.tsv", page_write_log, p, page_err, sizeof page_err))
        return -1;
    afile_join(path, sizeof path, p->dir, "last.ckpt");
    if (ckpt_save(path, p->m, NULL, page_err, sizeof page_err) != 0)
        return -1;
    if (p->best.step)
        memcpy(p->m->params.data, p->best.w, p->m->params.size * sizeof *p->best.w);
    afile_join(path, sizeof path, p->dir, "model.ckpt");
    if (ckpt_save(path, p->m, NULL, page_err, sizeof page_err) != 0)
        return -1;
    return afile_write(p->dir, "build.tsv", page_write_build, p, page_err, sizeof page_err);
}

typedef struct page_eval {
    const char *model;
    const eval_result *r;
    size_t n;
} page_eval;

static int page_write_eval(FILE *f, const void *ctx)
{
    const page_eval *e = ctx;
    return eval_write_tsv(f, e->model, e->r, e->n);
}

static int page_write_positions(FILE *f, const void *ctx)
{
    const page_eval *e = ctx;
    return eval_write_positions_tsv(f, e->model, e->r, e->n);
}

/* The final evaluation of run h, as `attnlab train` ends and `attnlab eval` runs it:
 * greedy decoding of samples fresh sequences at each evaluation length (the run's seed),
 * or of a data file's test set; writes dir/eval.tsv and dir/eval_positions.tsv. Returns
 * 0, or -1 with page_error(). */
int page_evaluate(int h)
{
    page_run *p = page_get(h);
    if (!p)
        return -1;
    eval_result *r = calloc(p->nl, sizeof *r);
    const task *t = r ? task_open(&p->m->cfg, page_err, sizeof page_err) : NULL;
    if (!r)
        snprintf(page_err, sizeof page_err, "out of memory");
    int rc = -1;
    if (t && (t->data ? eval_data_run(p->m, t, DATASET_TEST, p->lens, p->nl, NULL, r, page_err,
                                      sizeof page_err)
                      : eval_run(p->m, t, p->lens, p->nl, p->samples, p->m->cfg.seed, NULL, r,
                                 page_err, sizeof page_err)) == 0) {
        page_eval e = {p->m->ops->name, r, p->nl};
        rc = afile_write(p->dir, "eval.tsv", page_write_eval, &e, page_err, sizeof page_err) ||
             afile_write(p->dir, "eval_positions.tsv", page_write_positions, &e, page_err,
                         sizeof page_err) ? -1 : 0;
        eval_free(r, p->nl);
    }
    task_close(t);
    free(r);
    return rc;
}

/* Opens the checkpoint at path (one `attnlab train` wrote: model.ckpt or last.ckpt) as a
 * run in dir, to evaluate (page_evaluate: eval_lengths and samples from settings, as in
 * page_create, else the command line's) and decode. A data file's run needs the file at
 * the path its configuration names. Returns the handle, or 0 with page_error(). */
int page_open(const char *path, const char *dir, const char *settings)
{
    int h = 0;
    page_err[0] = '\0';
    page_run *p = page_new(dir, &h);
    if (!p)
        return 0;
    if (!(p->m = ckpt_load(path, NULL, page_err, sizeof page_err))) {
        free(p);
        return 0;
    }
    p->c = p->m->cfg;
    p->samples = 256;
    char buf[PAGE_SETTINGS_MAX];
    snprintf(buf, sizeof buf, "%s", settings);
    for (char *s = NULL, *kv = strtok_r(buf, " \t\r\n", &s); kv; kv = strtok_r(NULL, " \t\r\n", &s)) {
        if (strncmp(kv, "eval_lengths=", 13) == 0 &&
            !(p->nl = page_parse_lengths(kv + 13, p->c.max_len, p->lens))) {
            page_run_free(p);
            return 0;
        }
        if (strncmp(kv, "samples=", 8) == 0)
            p->samples = strtoul(kv + 8, NULL, 10) ? strtoul(kv + 8, NULL, 10) : 256;
    }
    const task *t = task_open(&p->c, page_err, sizeof page_err);
    if (!t) {
        page_run_free(p);
        return 0;
    }
    if (p->nl == 0 && t->data) {
        size_t *all = malloc((t->data->max_Ts + 1) * sizeof *all);
        const size_t na = all ? dataset_lengths(t->data, DATASET_TEST, 1, t->data->max_Ts,
                                                all) : 0;
        p->nl = na < PAGE_LENGTHS_MAX ? na : PAGE_LENGTHS_MAX;
        if (all)
            memcpy(p->lens, all, p->nl * sizeof *p->lens);
        free(all);
    } else if (p->nl == 0) {
        p->nl = eval_default_lengths(&p->c, p->lens, PAGE_LENGTHS_MAX);
    }
    task_close(t);
    if (afile_write(dir, "config.tsv", page_write_config, &p->c, page_err, sizeof page_err)) {
        page_run_free(p);
        return 0;
    }
    page_runs[h - 1] = p;
    return h;
}

/* A copy of the configuration of run h, as config.tsv holds it, in page_text(). */
int page_config(int h)
{
    page_run *p = page_get(h);
    if (!p)
        return -1;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        snprintf(page_err, sizeof page_err, "out of memory");
        return -1;
    }
    fprintf(f, "key\tvalue\nparameters\t%zu\n", p->m->params.size);
    config_write_tsv(&p->c, f);
    fclose(f);
    page_set_text(text);
    return 0;
}

/* Closes run h and frees what it holds (its files stay). Returns 0, or -1. */
int page_close(int h)
{
    page_run *p = page_get(h);
    if (!p)
        return -1;
    page_run_free(p);
    page_runs[h - 1] = NULL;
    return 0;
}

/* The page's recipe, the same for every model and both size presets: Adam at 3e-3, then
 * a half cosine to a tenth of it over 2,000 steps. On copy 4:16 the attention models reach
 * 0.999 in 28 to 50% fewer steps with it than at their own constant rates, at either
 * size (docs/performance.md, "In the browser"). Its horizon is its own, so a run's cap
 * plays no part in its schedule. */
#define PAGE_RECIPE "lr=0.003 lr_schedule=cosine decay_steps=2000"

/* At the command line's sizes a step is mostly products whose work grows with the batch,
 * so the page takes batches of 16: about half the time of a step, and on copy 4:16 the
 * attention models need less than twice the steps (performance.md). */
#define PAGE_DEFAULTS_BATCH "batch=16"

/* The settings of a size preset for model name: "small" (the model's ops->small: a few
 * thousand parameters, trains copy at lengths up to 8 in seconds) or "defaults" (the
 * command line's own sizes, batches of 16), each then the page's recipe. Returns the
 * settings (key=value words), or "" for an unknown preset or model. */
const char *page_preset(const char *name, const char *preset)
{
    static char settings[512];
    const model_ops *ops = model_lookup(name);
    const char *sizes = !ops                              ? NULL
                        : strcmp(preset, "small") == 0    ? ops->small
                        : strcmp(preset, "defaults") == 0 ? PAGE_DEFAULTS_BATCH
                                                          : NULL;
    if (!sizes)
        return "";
    snprintf(settings, sizeof settings, "%s %s", sizes, PAGE_RECIPE);
    return settings;
}

/* The models of the registry, one name per line, in page_text(). */
const char *page_models(void)
{
    static char names[256];
    size_t used = 0;
    names[0] = '\0';
    for (size_t k = 0; model_registry[k] && used < sizeof names; k++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", k ? "\n" : "",
                                 model_registry[k]->name);
    return names;
}

/* The GSL error handler that keeps a model's report for model_last_error instead of
 * aborting (the command line installs it in cli_main). Called once by the page. */
void page_init(void) { model_catch_errors(); }
