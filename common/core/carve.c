/* carve.c — cutting a state out of one block (see carve.h). */
#include "carve.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

double *carve_vector(carver *c, size_t n)
{
    /* the count stays below SIZE_MAX / sizeof(double), so that allocating it cannot
     * overflow either */
    if (c->overflow || n > SIZE_MAX / sizeof(double) - c->used) {
        c->overflow = 1;
        return NULL;
    }
    double *p = c->base ? c->base + c->used : NULL;
    c->used += n;
    return p;
}

int *carve_ints(carver *c, size_t n)
{
    if (c->overflow || n > SIZE_MAX / sizeof(int) - c->iused) {
        c->overflow = 1;
        return NULL;
    }
    int *p = c->ibase ? c->ibase + c->iused : NULL;
    c->iused += n;
    return p;
}

size_t carve_mul(carver *c, size_t a, size_t b)
{
    if (b != 0 && a > SIZE_MAX / b) {
        c->overflow = 1;
        return SIZE_MAX;
    }
    return a * b;
}

gsl_matrix_view carve_matrix(carver *c, size_t rows, size_t cols)
{
    gsl_matrix_view v;
    memset(&v, 0, sizeof v); /* counting hands out an empty view: data NULL, sizes 0 */
    const size_t n = carve_mul(c, rows, cols);
    double *p = carve_vector(c, n);
    if (p)
        v = gsl_matrix_view_array(p, rows, cols);
    return v;
}

int carve_reserve(carve_block *blk, carve_layout layout, void *ctx)
{
    carver count = {0};
    layout(&count, ctx);
    if (count.overflow)
        return -1;
    /* calloc(0) may return NULL: ask for at least one of each */
    double *d = calloc(count.used ? count.used : 1, sizeof *d);
    int *i = calloc(count.iused ? count.iused : 1, sizeof *i);
    if (!d || !i) {
        free(d);
        free(i);
        return -1;
    }
    carve_free(blk);
    *blk = (carve_block){.d = d, .i = i, .nd = count.used, .ni = count.iused};
    return 0;
}

carver carve_start(const carve_block *blk)
{
    return (carver){.base = blk->d, .ibase = blk->i};
}

void carve_free(carve_block *blk)
{
    free(blk->d);
    free(blk->i);
    *blk = (carve_block){0};
}
