/* cmd_gradcheck.c — attnlab gradcheck: a model's backward pass against finite
 * differences.
 *
 * Design. gradcheck builds a small model from the settings like train, with the sizes of
 * ops->gradcheck_sizes between the model's defaults and the flags (sizes all different,
 * so a transposed index cannot hide), draws one batch, and hands it to gradcheck_model
 * (gradcheck.h), printing the largest relative error of each tensor as it comes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "buildinfo.h"
#include "cmd.h"
#include "../core/config.h"
#include "../core/gradcheck.h"
#include "../core/model.h"
#include "../core/rng.h"
#include "../core/task.h"

/* Prints a model's variant (key=value ..., model.h) as the flags that set it: " --KEY
 * VALUE" each, the switch alone for a boolean set to 1. */
static void print_setting_flags(const char *variant)
{
    char key[CONFIG_STR_MAX], flag[CONFIG_STR_MAX];
    for (const char *p = variant; *p;) {
        const size_t len = strcspn(p, " "), k = strcspn(p, "=");
        const config_field *f = NULL;
        if (k < len && k < sizeof key) {
            memcpy(key, p, k);
            key[k] = '\0';
            f = config_find(key);
        }
        if (f) {
            config_flag_name(f, flag, sizeof flag);
            if (f->type == CFG_BOOL && len - k == 2 && p[k + 1] == '1')
                printf(" --%s", flag);
            else
                printf(" --%s %.*s", flag, (int)(len - k - 1), p + k + 1);
        }
        p += len + (p[len] == ' ');
    }
}

void cmd_gradcheck_help(void)
{
    printf(
        "Usage: attnlab gradcheck --model NAME [--len N] [--stride N] [--seed S] [SETTINGS...]\n"
        "\n"
        "Checks the hand-written backward pass of a model: for every parameter tensor it\n"
        "compares the analytic gradient of the loss with fourth-order central differences\n"
        "(8(L(w+h) - L(w-h)) - (L(w+2h) - L(w-2h))) / 12h, h = %g, on a small random\n"
        "batch, and prints the largest relative error |a - n| / max(|a| + |n|, %g) of\n"
        "each tensor. The token inputs are discrete; their gradient is that of the\n"
        "embedding rows, checked with the rest.\n"
        "The last line is 'max relative error: X'; the status is 1 when X >= %g.\n"
        "\n"
        "The model is built small (sizes all different, so a transposed index cannot hide):\n"
        "symbols 5, embed 5, hidden 6, attn 7, d-model 8, heads 2, d-ff 12, layers 2,\n"
        "batch 2; any setting flag of 'attnlab train' overrides them.\n"
        "  --len N      source length of the batch (default 4; at most --max-len, which\n"
        "               gradcheck sets to 16)\n"
        "  --stride N   check every N-th entry of each tensor (default 1: all)\n"
        "\n"
        "Examples (each model, with its first variant):\n",
        GRADCHECK_H, GRADCHECK_TINY, GRADCHECK_TOL);
    for (size_t k = 0; model_registry[k]; k++) {
        const char *const *v = model_registry[k]->variants;
        printf("  attnlab gradcheck --model %s", model_registry[k]->name);
        print_setting_flags(v && v[0] && v[1] ? v[1] : "");
        printf("\n");
    }
}

/* The small sizes of a gradient check: the harness's here, the model's from its ops. */
static void gradcheck_sizes(config *c, const model_ops *ops, const void *ctx)
{
    (void)ctx;
    c->symbols = 5;
    c->batch = 2;
    c->max_len = 16;
    c->train_min = 1;
    c->train_max = 16;
    ops->gradcheck_sizes(c);
}

static void print_tensor_error(void *ctx, const char *tensor, double err, size_t row,
                               size_t col)
{
    const arena *a = ctx;
    long k = arena_find(a, tensor);
    printf("%-28s (%4zu, %4zu)  %10.3e  at (%zu, %zu)%s\n", tensor, a->spec[k].rows,
           a->spec[k].cols, err, row, col, err < GRADCHECK_TOL ? "" : "  <-- FAIL");
}

/* What a gradcheck command line asks for (parse_gradcheck). */
typedef struct gradcheck_request {
    config c;
    const model_ops *ops;
    size_t L, stride;
} gradcheck_request;

/* Reads and checks gradcheck's command line into *q: the model at the sizes of a
 * gradient check, then the flags; --len and --stride. Returns 0, ARGS_HELP_SHOWN, or the
 * exit status after the message. */
static int parse_gradcheck(int argc, char **argv, gradcheck_request *q)
{
    static const args_flag allowed[] = {ARGS_LEN, ARGS_STRIDE, 0};
    args_line a;
    int rc = args_parse(argc, argv, 1, allowed, cmd_gradcheck_help, &a);
    if (rc)
        return rc;
    const args_plan plan = {.overrides = gradcheck_sizes};
    if ((rc = args_config(&a, &plan, &q->c, &q->ops)))
        return rc;
    q->L = 4;
    q->stride = 1;
    if (args_count(&a, ARGS_LEN, 1, q->c.max_len, &q->L) ||
        args_count(&a, ARGS_STRIDE, 1, 1000000, &q->stride))
        return ARGS_EXIT_USAGE;
    return 0;
}

int cmd_gradcheck_check(int argc, char **argv)
{
    static gradcheck_request q;
    return args_exit(parse_gradcheck(argc, argv, &q));
}

int cmd_gradcheck(int argc, char **argv)
{
    static gradcheck_request q;
    int rc = parse_gradcheck(argc, argv, &q);
    if (rc)
        return args_exit(rc);
    const config *const c = &q.c;
    const model_ops *ops = q.ops;
    const size_t L = q.L, stride = q.stride;
    buildinfo_set_threads(c->threads);
    char err[ARGS_ERR_MAX];
    const task *t = task_open(c, err, sizeof err);
    if (!t)
        return args_run_error("%s", err);
    const size_t Tt = task_target_len(t, L);
    rng_streams r;
    batch b;
    model *m = NULL;
    if (rng_open(&r, c->seed) != 0 || batch_alloc(&b, c->batch, L, Tt) != 0 ||
        !(m = ops->alloc(c)) || ops->reserve(m, c->batch, L, Tt) != 0) {
        if (m)
            ops->free(m);
        rng_close(&r);
        task_close(t);
        return args_run_error("out of memory");
    }
    ops->init(m, r.s[RNG_INIT]);
    task_fill(t, &b, c->batch, L, c->symbols, r.s[RNG_TRAIN]);
    printf("gradient check of %s: %zu parameters, batch %zu, source length %zu, task %s\n",
           c->model, m->params.size, c->batch, L, c->task);
    printf("%-28s %12s  %10s\n", "tensor", "shape", "max rel err");
    double worst = gradcheck_model(m, &b, stride, print_tensor_error, &m->params);
    printf("max relative error: %.3e\n", worst);
    rc = worst < GRADCHECK_TOL ? 0 : ARGS_EXIT_RUNTIME;
    if (rc)
        fprintf(stderr, "%s: the gradient check failed (tolerance %g)\n", args_command(),
                GRADCHECK_TOL);
    ops->free(m);
    batch_free(&b);
    rng_close(&r);
    task_close(t);
    return rc;
}
