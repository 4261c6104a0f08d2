/* trainfiles.c — the files a training run writes as it goes: the log, config.tsv,
 * build.tsv and the periodic checkpoint set (see trainfiles.h).
 *
 * Design. Every file goes through afile.h; the set of a checkpoint is staged whole
 * before the first rename, so a run stopped or failing at any moment leaves on disk
 * either the previous set or the new one, never a mixture.
 */
#include "trainfiles.h"

#include <errno.h>
#include <stdio.h>

#include "../core/afile.h"
#include "args.h"
#include "buildinfo.h"
#include "../core/checkpoint.h"
#include "../core/config.h"
#include "../core/train.h"
#include "traindir.h"

int trainfiles_write_log(FILE *f, const void *ctx)
{
    const trainfiles_log *l = ctx;
    fflush(l->f);
    return fwrite(l->buf, 1, l->len, f) == l->len ? 0 : -1;
}

int trainfiles_write_config(FILE *f, const void *c) { return config_write_tsv(c, f); }

int trainfiles_write_build(FILE *f, const void *ctx)
{
    const trainfiles_facts *rf = ctx;
    return train_write_build(f, buildinfo_write_tsv, rf->m->params.size, rf->ts, rf->best);
}

int trainfiles_save(void *p, size_t step, const optim *o)
{
    trainfiles_ckpt *c = p;
    char path[AFILE_PATH_MAX], err[ARGS_ERR_MAX];
    ckpt_train_state ts = {.step = step, .n = o->n, .m = o->m, .v = o->v};
    for (int k = 0; k < CKPT_RNG_STREAMS; k++) {
        ts.rng[k] = gsl_rng_state(c->r->s[k]);
        ts.rng_size[k] = gsl_rng_size(c->r->s[k]);
    }
    /* the weights of the best validation, when they changed since the last checkpoint */
    const int new_best = c->best->step && c->best->step != c->best_saved;
    afile lf, bf, cf;
    lf.tmp[0] = bf.tmp[0] = cf.tmp[0] = '\0';
    lf.f = bf.f = cf.f = NULL;
    int rc = -1;
    afile_join(path, sizeof path, c->dir, "train_log.tsv");
    if (afile_open(&lf, path, err, sizeof err) != 0)
        goto fail;
    if (trainfiles_write_log(lf.f, c->log) != 0 && !ferror(lf.f))
        lf.err_no = EIO;
    if (afile_finish(&lf, err, sizeof err) != 0)
        goto fail;
    if (new_best &&
        traindir_stage_weights(&bf, c->m, c->best->w, c->dir, "best.ckpt", err, sizeof err))
        goto fail;
    afile_join(path, sizeof path, c->dir, "checkpoint.ckpt");
    if (ckpt_stage(&cf, path, c->m, &ts, err, sizeof err) != 0)
        goto fail;
    /* the renames: the log, the best weights, then the checkpoint */
    if (afile_publish(&lf, err, sizeof err) != 0)
        goto fail;
    c->log_step = step;
    if (new_best && afile_publish(&bf, err, sizeof err) != 0)
        goto fail;
    if (new_best)
        c->best_saved = c->best->step;
    if (afile_publish(&cf, err, sizeof err) != 0)
        goto fail;
    c->ckpt_step = step;
    return 0;
fail:
    afile_abort(&lf);
    afile_abort(&bf);
    afile_abort(&cf);
    args_run_error("%s", err);
    return rc;
}
