/* walk.c — the three passes of a parameter walk (see walk.h). */
#include "walk.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void walk_tensor(walk *wk, gsl_matrix **w, gsl_matrix **g, const char *prefix,
                 const char *name, size_t rows, size_t cols)
{
    const size_t k = wk->n++;
    if (wk->numel != SIZE_MAX) { /* every pass counts; only n_params reads it */
        if (cols != 0 && rows > (SIZE_MAX - 1 - wk->numel) / cols)
            wk->numel = SIZE_MAX;
        else
            wk->numel += rows * cols;
    }
    if (wk->spec) { /* pass 2: describe the tensor */
        arena_spec *s = &wk->spec[k];
        int len = snprintf(s->name, sizeof s->name, "%s%s%s", prefix, *prefix ? "." : "",
                           name);
        if (len < 0 || (size_t)len >= sizeof s->name)
            wk->failed = 1; /* a truncated name could collide with another */
        s->rows = rows;
        s->cols = cols;
    } else if (wk->a) { /* pass 3: hand out its views (the arena was built from pass 2) */
        *w = arena_w(wk->a, k);
        *g = arena_g(wk->a, k);
    }
}

void walk_join(char *out, size_t n, const char *prefix, const char *part)
{
    snprintf(out, n, "%s%s%s", prefix, *prefix ? "." : "", part);
}

int walk_build(arena *a, walk_visit visit, void *ctx)
{
    memset(a, 0, sizeof *a);
    walk count = {0};
    visit(&count, ctx); /* pass 1: how many tensors */
    if (count.numel == SIZE_MAX)
        return -1;
    arena_spec *spec = calloc(count.n ? count.n : 1, sizeof *spec);
    if (!spec)
        return -1;
    walk describe = {.spec = spec};
    visit(&describe, ctx); /* pass 2: their names and shapes */
    int rc = describe.failed || describe.n != count.n ? -1 : arena_alloc(a, spec, count.n);
    free(spec);
    if (rc != 0)
        return -1;
    walk bind = {.a = a};
    visit(&bind, ctx); /* pass 3: the views */
    return 0;
}

size_t walk_count(walk_visit visit, void *ctx)
{
    walk count = {0};
    visit(&count, ctx);
    if (count.numel == SIZE_MAX)
        return 0;
    /* the names too: a configuration whose names do not fit cannot be built */
    arena_spec *spec = calloc(count.n ? count.n : 1, sizeof *spec);
    if (!spec)
        return 0;
    walk describe = {.spec = spec};
    visit(&describe, ctx);
    free(spec);
    return describe.failed ? 0 : count.numel;
}
