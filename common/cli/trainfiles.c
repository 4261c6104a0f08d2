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
    fprintf(f, "key\tvalue\n");
    buildinfo_write_tsv(f);
    fprintf(f, "parameters\t%zu\n", rf->m->params.size);
    if (rf->ts) {
        fprintf(f, "train_steps\t%zu\n", rf->ts->steps);
        fprintf(f, "train_seconds\t%.3f\n", rf->ts->seconds);
        /* converged: a plateau ended the run (patience); target: its validation reached
         * stop_acc; budget: it ran every step */
        fprintf(f, "stopped\t%s\n", rf->ts->early == TRAIN_PLATEAU  ? "converged"
                                     : rf->ts->early == TRAIN_TARGET ? "target"
                                                                     : "budget");
    }
    if (rf->best && rf->best->step) {
        /* the weights of model.ckpt: the step of the best validation, the training
         * seconds up to it (as the log counts them), its validation scores */
        fprintf(f, "best_step\t%zu\n", rf->best->step);
        fprintf(f, "best_seconds\t%.3f\n", rf->best->seconds);
        fprintf(f, "best_val_token_acc\t%.6f\n", rf->best->token_acc);
        fprintf(f, "best_val_loss\t%.6g\n", rf->best->loss);
    }
    return ferror(f) ? -1 : 0;
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
