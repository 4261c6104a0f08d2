/* summary_group.c — the runs of a comparison grouped by setup, and the groups' names
 * (see summary_group.h).
 *
 * Design. Runs whose settings agree except for the seed (and the settings that change
 * nothing computed, is_incidental) are the seeds of one group. A group is named after its
 * model; a second setup of the same model adds the settings in which it differs
 * ("MODEL:hidden=256"). The arrays of groups and of a group's runs grow with the input:
 * no silent limit.
 */
#include "summary_group.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/config.h"
#include "../core/model.h"
#include "../core/task.h"
#include "rundir.h"

/* Settings that do not change what a run computes, or that tell seeds apart. */
static int is_incidental(const char *key)
{
    static const char *const keys[] = {"seed", "threads", "log_every", "checkpoint_every"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (strcmp(key, keys[k]) == 0)
            return 1;
    return 0;
}

/* Does setting k matter and differ between a and b? Writes its value in b to y. */
static int differs(const config *a, const config *b, size_t k, char y[static 128])
{
    char x[128];
    if (is_incidental(config_fields[k].name))
        return 0;
    config_format(a, &config_fields[k], x, sizeof x);
    config_format(b, &config_fields[k], y, 128);
    return strcmp(x, y) != 0;
}

/* Do two runs differ only in their seed (and incidental settings)? */
static int same_setup(const config *a, const config *b)
{
    char y[128];
    for (size_t k = 0; k < config_n_fields; k++)
        if (differs(a, b, k, y))
            return 0;
    return 1;
}

int summary_same_model(const summary_ctx *c, size_t a, size_t b)
{
    return strcmp(c->g[a].runs[0]->cfg.model, c->g[b].runs[0]->cfg.model) == 0;
}

size_t summary_setups(const summary_ctx *c, size_t m)
{
    size_t n = 0;
    for (size_t o = 0; o < c->ng; o++)
        n += summary_same_model(c, o, m);
    return n;
}

int summary_name_groups(summary_ctx *c, char *err, size_t errn)
{
    for (size_t m = 0; m < c->ng; m++) {
        const config *cfg = &c->g[m].runs[0]->cfg;
        snprintf(c->g[m].name, GROUP_NAME_MAX, "%s", cfg->model);
        char y[128];
        for (size_t k = 0; k < config_n_fields; k++) {
            /* does field k tell this model's setups apart? */
            int tells = 0;
            for (size_t o = 0; o < c->ng && !tells; o++)
                tells = o != m && summary_same_model(c, o, m) &&
                        differs(&c->g[o].runs[0]->cfg, cfg, k, y);
            if (!tells)
                continue;
            config_format(cfg, &config_fields[k], y, sizeof y);
            size_t len = strlen(c->g[m].name);
            int w = snprintf(c->g[m].name + len, GROUP_NAME_MAX - len, "%s%s=%s",
                             strchr(c->g[m].name, ':') ? "," : ":", config_fields[k].name, y);
            if (w < 0 || (size_t)w >= GROUP_NAME_MAX - len) {
                snprintf(err, errn, "the runs of %s in %s differ in too many settings to "
                         "name them (more than %d characters)", cfg->model,
                         c->g[m].runs[0]->dir, GROUP_NAME_MAX - 1);
                return -1;
            }
        }
        if (strchr(c->g[m].name, ':'))
            fprintf(stderr, "attnlab report: runs of %s with other settings are shown as %s\n",
                    cfg->model, c->g[m].name);
    }
    return 0;
}

size_t summary_group_rank(const model_group *g) { return model_rank(g->runs[0]->cfg.model); }

int summary_add_run(summary_ctx *c, rundir *r)
{
    /* runs are seeds of one group only when every other setting agrees */
    size_t m = 0;
    while (m < c->ng && !same_setup(&c->g[m].runs[0]->cfg, &r->cfg))
        m++;
    if (m == c->ng) {
        if (c->ng == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 4;
            model_group *g = realloc(c->g, cap * sizeof *g);
            if (!g)
                return -1;
            c->g = g, c->cap = cap;
        }
        memset(&c->g[c->ng], 0, sizeof c->g[c->ng]);
        c->ng++;
    }
    model_group *g = &c->g[m];
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 8;
        rundir **runs = realloc(g->runs, cap * sizeof *runs);
        if (!runs)
            return -1;
        g->runs = runs, g->cap = cap;
    }
    g->runs[g->n++] = r;
    return 0;
}

double summary_flops(const rundir *r, size_t Ts)
{
    const task *t = task_lookup(r->cfg.task);
    const model_ops *ops = model_lookup(r->cfg.model);
    if (!t || !ops || !ops->flops)
        return NAN;
    return ops->flops(&r->cfg, Ts, task_target_len(t, Ts));
}
