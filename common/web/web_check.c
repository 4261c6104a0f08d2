/* web_check.c — the checks of the WebAssembly build, run under node by `make check-web`:
 * every model's gradient check, short trainings whose checkpoints the native build must
 * write byte for byte, and a measure of training speed (prefix: webcheck_).
 *
 * Design. A front-end of the core, like the command line and the page: it reaches the
 * models only through model.h and the registry (attnlab.c built with ATTNLAB_NO_MAIN),
 * and uses only what every front-end compiles (no processes, signals, locks, dlsym or
 * gnuplot). It builds each configuration the way `attnlab` does (config_defaults, the
 * model's defaults, then settings as key=value through config_set), so that a run here
 * and `attnlab train` with the same settings start from the same configuration; for each
 * run it writes the equivalent attnlab flags beside the checkpoints, which is what the
 * comparison script (tests/web/check.sh) runs natively. It is portable C: the same file
 * also builds natively, which is how the speeds in docs/web.md are compared.
 *
 * Usage (under node: node web_check.js ARGS; files go to the real file system):
 *   web_check gradcheck          every model and variant at its gradient-check sizes
 *   web_check train DIR [STEPS]  every model and variant trained STEPS (60) steps, seed 1,
 *                                lengths 3..9: DIR/NAME/last.ckpt and model.ckpt, and
 *                                DIR/runs.tsv, one line per run: NAME, then its flags
 *   web_check bench [STEPS]      steps per second of each model at its defaults
 * Exit status: 0, 1 when a check fails or a run cannot be written, 2 for bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/afile.h"
#include "../cli/buildinfo.h"
#include "../core/checkpoint.h"
#include "../core/config.h"
#include "../core/gradcheck.h"
#include "../core/model.h"
#include "../core/optim.h"
#include "../core/rng.h"
#include "../core/task.h"
#include "../core/train.h"

/* The registry (attnlab.c): every model, NULL-terminated. */
extern const model_ops *const model_registry[];

#define WEBCHECK_ERR_MAX 512
#define WEBCHECK_PATH_MAX 1024
#define WEBCHECK_FLAGS_MAX 512

/* Applies settings, a space-separated list of key=value (config.h's keys), to c, and
 * appends their attnlab flags to flags (n bytes): --key value, or --key alone for a
 * switch set to 1, '-' written for '_'. Returns 0, or -1 with one line in err. */
static int webcheck_apply(config *c, const char *settings, char *flags, size_t n, char *err,
                          size_t en)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", settings);
    for (char *save = NULL, *kv = strtok_r(buf, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            snprintf(err, en, "setting '%s' is not key=value", kv);
            return -1;
        }
        *eq = '\0';
        const config_field *f = config_find(kv);
        if (!f) {
            snprintf(err, en, "setting '%s': no such configuration key", kv);
            return -1;
        }
        if (config_set(c, f, eq + 1, err, en) != 0)
            return -1;
        char flag[64];
        config_flag_name(f, flag, sizeof flag);
        size_t used = strlen(flags);
        if (f->type == CFG_BOOL && strcmp(eq + 1, "1") == 0)
            snprintf(flags + used, n - used, " --%s", flag);
        else
            snprintf(flags + used, n - used, " --%s %s", flag, eq + 1);
    }
    return 0;
}

/* The configuration of model ops as `attnlab train --model NAME SETTINGS` builds it:
 * generic defaults, the model's, then settings; checked. Returns 0, or -1 with err. */
static int webcheck_config(config *c, const model_ops *ops, const char *settings, char *flags,
                           size_t n, char *err, size_t en)
{
    config_defaults(c);
    ops->defaults(c);
    snprintf(c->model, sizeof c->model, "%s", ops->name);
    snprintf(flags, n, "--model %s", ops->name);
    if (webcheck_apply(c, settings, flags, n, err, en) != 0)
        return -1;
    if (config_check(c, err, en) != 0 || ops->check(c, err, en) != 0)
        return -1;
    return 0;
}

/* A file-name label of a variant: "defaults", or its settings with '=' and ' ' made
 * '-' and '_' ("cell-lstm"). */
static void webcheck_label(const char *variant, char *buf, size_t n)
{
    snprintf(buf, n, "%s", *variant ? variant : "defaults");
    for (char *p = buf; *p; p++)
        *p = *p == '=' ? '-' : *p == ' ' ? '_' : *p;
}

/* ---- gradient checks ------------------------------------------------------------------ */

static void webcheck_report(void *ctx, const char *tensor, double err, size_t row, size_t col)
{
    (void)ctx;
    printf("  %-28s %10.3e at (%zu, %zu)%s\n", tensor, err, row, col,
           err < GRADCHECK_TOL ? "" : "  <-- FAIL");
}

/* The gradient check of one model and variant, as `attnlab gradcheck --model NAME
 * SETTINGS` runs it (the same sizes, source length 4, every entry). Returns the largest
 * relative error, or a negative number when it could not run (the reason printed). */
static double webcheck_gradcheck_one(const model_ops *ops, const char *variant)
{
    char err[WEBCHECK_ERR_MAX], flags[WEBCHECK_FLAGS_MAX];
    config c;
    config_defaults(&c);
    ops->defaults(&c);
    snprintf(c.model, sizeof c.model, "%s", ops->name);
    /* the harness's small sizes, then the model's (cmd_gradcheck's gradcheck_sizes) */
    c.symbols = 5;
    c.batch = 2;
    c.max_len = 16;
    c.train_min = 1;
    c.train_max = 16;
    ops->gradcheck_sizes(&c);
    flags[0] = '\0';
    if (webcheck_apply(&c, variant, flags, sizeof flags, err, sizeof err) != 0) {
        fprintf(stderr, "web_check: %s %s: %s\n", ops->name, variant, err);
        return -1;
    }
    const size_t L = 4;
    const task *t = task_open(&c, err, sizeof err);
    if (!t) {
        fprintf(stderr, "web_check: %s\n", err);
        return -1;
    }
    const size_t Tt = task_target_len(t, L);
    rng_streams r;
    batch b;
    model *m = NULL;
    memset(&r, 0, sizeof r);
    memset(&b, 0, sizeof b);
    double worst = -1;
    if (rng_open(&r, c.seed) != 0 || batch_alloc(&b, c.batch, L, Tt) != 0 ||
        !(m = ops->alloc(&c)) || ops->reserve(m, c.batch, L, Tt) != 0) {
        fprintf(stderr, "web_check: out of memory for the gradient check of %s\n", ops->name);
    } else {
        ops->init(m, r.s[RNG_INIT]);
        task_fill(t, &b, c.batch, L, c.symbols, r.s[RNG_TRAIN]);
        printf("gradient check of %s%s%s: %zu parameters\n", ops->name, *variant ? " " : "",
               variant, m->params.size);
        worst = gradcheck_model(m, &b, 1, webcheck_report, NULL);
        printf("  max relative error %.3e (tolerance %g)\n", worst, GRADCHECK_TOL);
    }
    if (m)
        ops->free(m);
    batch_free(&b);
    rng_close(&r);
    task_close(t);
    return worst;
}

static int webcheck_gradcheck(void)
{
    int failed = 0, run = 0;
    for (size_t k = 0; model_registry[k]; k++) {
        const model_ops *ops = model_registry[k];
        for (size_t v = 0; ops->variants[v]; v++) {
            double worst = webcheck_gradcheck_one(ops, ops->variants[v]);
            run++;
            if (worst < 0 || !(worst < GRADCHECK_TOL))
                failed++;
        }
    }
    printf("gradient checks: %d passed, %d failed\n", run - failed, failed);
    return failed ? 1 : 0;
}

/* ---- short trainings ------------------------------------------------------------------ */

/* The settings of every comparison run, before the variant's own. */
#define WEBCHECK_TRAIN_SETTINGS "seed=1 train_min=3 train_max=9"

/* Trains model ops with c from a new start and writes dir/last.ckpt (the weights after
 * the last step) and dir/model.ckpt (those of the best validation), as `attnlab train`
 * does. When rate is not NULL it receives the training steps per second. Returns 0, or
 * -1 with err. */
static int webcheck_train_one(const model_ops *ops, const config *c, const char *dir,
                              double *rate, char *err, size_t n)
{
    rng_streams r;
    optim o;
    model *m = NULL;
    memset(&r, 0, sizeof r);
    memset(&o, 0, sizeof o);
    train_best best = {0};
    int rc = -1;
    if (rng_open(&r, c->seed) != 0 || !(m = ops->alloc(c)) ||
        optim_alloc(&o, m->params.size, c->beta1, c->beta2, c->eps) != 0 ||
        !(best.w = malloc(m->params.size * sizeof *best.w))) {
        snprintf(err, n, "out of memory building %s", ops->name);
        goto out;
    }
    ops->init(m, r.s[RNG_INIT]);
    memcpy(best.w, m->params.data, m->params.size * sizeof *best.w);
    const task *t = task_open(c, err, n);
    if (!t)
        goto out;
    train_summary ts;
    int tr = train_run(m, t, c, &r, &o, 1, NULL, TRAIN_QUIET, NULL, &best, &ts, err, n);
    task_close(t);
    if (tr != TRAIN_DONE)
        goto out;
    if (rate)
        *rate = ts.seconds > 0 ? (double)ts.steps / ts.seconds : 0;
    if (dir) {
        char path[WEBCHECK_PATH_MAX];
        snprintf(path, sizeof path, "%s/last.ckpt", dir);
        if (ckpt_save(path, m, NULL, err, n) != 0)
            goto out;
        if (best.step)
            memcpy(m->params.data, best.w, m->params.size * sizeof *best.w);
        snprintf(path, sizeof path, "%s/model.ckpt", dir);
        if (ckpt_save(path, m, NULL, err, n) != 0)
            goto out;
    }
    rc = 0;
out:
    free(best.w);
    optim_free(&o);
    rng_close(&r);
    if (m)
        ops->free(m);
    return rc;
}

static int webcheck_train(const char *dir, const char *steps)
{
    char err[WEBCHECK_ERR_MAX], path[WEBCHECK_PATH_MAX], label[64];
    char settings[256], flags[WEBCHECK_FLAGS_MAX];
    snprintf(path, sizeof path, "%s/runs.tsv", dir);
    FILE *runs = NULL;
    if (afile_mkdirs(dir, err, sizeof err) != 0 || !(runs = fopen(path, "w"))) {
        fprintf(stderr, "web_check: cannot write %s\n", path);
        return 1;
    }
    int rc = 0;
    for (size_t k = 0; model_registry[k] && rc == 0; k++) {
        const model_ops *ops = model_registry[k];
        for (size_t v = 0; ops->variants[v] && rc == 0; v++) {
            config c;
            snprintf(settings, sizeof settings, "steps=%s " WEBCHECK_TRAIN_SETTINGS " %s", steps,
                     ops->variants[v]);
            webcheck_label(ops->variants[v], label, sizeof label);
            char name[128];
            snprintf(name, sizeof name, "%s-%s", ops->name, label);
            snprintf(path, sizeof path, "%s/%s", dir, name);
            if (afile_mkdirs(path, err, sizeof err) != 0 ||
                webcheck_config(&c, ops, settings, flags, sizeof flags, err, sizeof err) != 0 ||
                webcheck_train_one(ops, &c, path, NULL, err, sizeof err) != 0) {
                fprintf(stderr, "web_check: %s: %s\n", name, err);
                rc = 1;
                break;
            }
            fprintf(runs, "%s\t%s\n", name, flags);
            printf("trained %s (%s)\n", name, flags);
        }
    }
    if (fclose(runs) != 0 && rc == 0) {
        fprintf(stderr, "web_check: cannot write %s/runs.tsv\n", dir);
        rc = 1;
    }
    return rc;
}

/* ---- speed ----------------------------------------------------------------------------- */

static int webcheck_bench(const char *steps)
{
    char err[WEBCHECK_ERR_MAX], settings[64], flags[WEBCHECK_FLAGS_MAX], path[WEBCHECK_PATH_MAX];
    const char *blas = buildinfo_blas(path, sizeof path);
    printf("model\tsteps\tsteps_per_s\tblas\n");
    for (size_t k = 0; model_registry[k]; k++) {
        const model_ops *ops = model_registry[k];
        config c;
        double rate = 0;
        /* one validation at the end only: the rate counts training steps */
        snprintf(settings, sizeof settings, "steps=%s log_every=%s", steps, steps);
        if (webcheck_config(&c, ops, settings, flags, sizeof flags, err, sizeof err) != 0 ||
            webcheck_train_one(ops, &c, NULL, &rate, err, sizeof err) != 0) {
            fprintf(stderr, "web_check: %s: %s\n", ops->name, err);
            return 1;
        }
        printf("%s\t%s\t%.2f\t%s\n", ops->name, steps, rate, blas);
        fflush(stdout);
    }
    return 0;
}

static int webcheck_usage(void)
{
    fprintf(stderr, "usage: web_check gradcheck | train DIR [STEPS] | bench [STEPS]\n");
    return 2;
}

/* Is text a whole number from 1 to 1000000? */
static int webcheck_steps_ok(const char *text)
{
    char *end;
    unsigned long v = strtoul(text, &end, 10);
    return *text >= '0' && *text <= '9' && !*end && v >= 1 && v <= 1000000;
}

int main(int argc, char **argv)
{
    model_catch_errors();
    if (argc < 2)
        return webcheck_usage();
    const char *cmd = argv[1];
    const char *steps = NULL;
    if (strcmp(cmd, "gradcheck") == 0 && argc == 2)
        return webcheck_gradcheck();
    if (strcmp(cmd, "train") == 0 && (argc == 3 || argc == 4))
        steps = argc == 4 ? argv[3] : "60";
    else if (strcmp(cmd, "bench") == 0 && argc <= 3)
        steps = argc == 3 ? argv[2] : "20";
    else
        return webcheck_usage();
    if (!webcheck_steps_ok(steps)) {
        fprintf(stderr, "web_check: steps '%s' is not a whole number from 1 to 1000000\n", steps);
        return 2;
    }
    return strcmp(cmd, "train") == 0 ? webcheck_train(argv[2], steps) : webcheck_bench(steps);
}
