/* eval.c — greedy-decoding evaluation per length (see eval.h). */
#include "eval.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

/* Sequences decoded per call: large enough for the GEMMs to be efficient, small
 * enough that the workspace of a long evaluation length stays modest. */
#define EVAL_CHUNK 64

int eval_run(model *m, const task *t, const size_t *lens, size_t nl, size_t samples,
             unsigned long seed, const volatile sig_atomic_t *stop, eval_result *out,
             char *err, size_t n)
{
    size_t Lmax = 0, Tmax = 0;
    for (size_t k = 0; k < nl; k++) {
        if (lens[k] == 0 || lens[k] > m->cfg.max_len) {
            snprintf(err, n, "evaluation length %zu is outside 1..%zu (the model's max_len)",
                     lens[k], m->cfg.max_len);
            return -1;
        }
        if (lens[k] > Lmax)
            Lmax = lens[k];
        if (task_target_len(t, lens[k]) > Tmax)
            Tmax = task_target_len(t, lens[k]);
    }
    memset(out, 0, nl * sizeof *out);
    const size_t chunk = samples < EVAL_CHUNK ? samples : EVAL_CHUNK;
    batch b;
    int *pred = NULL;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r || batch_alloc(&b, chunk, Lmax, Tmax) != 0 ||
        !(pred = malloc(chunk * Tmax * sizeof *pred)) ||
        m->ops->reserve(m, chunk, Lmax, Tmax) != 0) {
        snprintf(err, n, "out of memory for evaluating %zu sequences of length %zu", chunk,
                 Lmax);
        if (r)
            gsl_rng_free(r);
        free(pred);
        return -1;
    }
    int rc = 0;
    for (size_t k = 0; k < nl && rc == 0; k++) {
        const size_t L = lens[k], Tt = task_target_len(t, L);
        eval_result *e = &out[k];
        e->len = L;
        e->tlen = Tt;
        e->samples = samples;
        e->pos_acc = calloc(Tt, sizeof(double));
        if (!e->pos_acc) {
            snprintf(err, n, "out of memory");
            rc = -1;
            break;
        }
        /* each length has its own stream: same sequences whatever else is evaluated */
        gsl_rng_set(r, rng_stream_seed((uint64_t)seed * 65537u + L, RNG_EVAL));
        size_t tok = 0, seq = 0;
        double loss = 0;
        for (size_t done = 0; done < samples; done += chunk) {
            if (stop && *stop) {
                rc = EVAL_STOPPED;
                break;
            }
            const size_t B = samples - done < chunk ? samples - done : chunk;
            task_fill(t, &b, B, L, m->cfg.symbols, r);
            if (model_decode(m, b.src, B, L, Tt, pred) != 0) {
                snprintf(err, n, "%s decode failed at length %zu: %s", m->ops->name, L,
                         model_last_error());
                rc = -1;
                break;
            }
            for (size_t i = 0; i < B; i++) {
                size_t ok = 0;
                for (size_t j = 0; j < Tt; j++) {
                    int hit = pred[i * Tt + j] == b.tgt[i * Tt + j];
                    ok += (size_t)hit;
                    e->pos_acc[j] += hit;
                }
                tok += ok;
                seq += ok == Tt;
            }
            const double l = model_forward(m, &b, NULL);
            if (isnan(l)) {
                snprintf(err, n, "%s forward failed at length %zu: %s", m->ops->name, L,
                         model_failure());
                rc = -1;
                break;
            }
            loss += l * (double)B;
        }
        if (rc != 0)
            break;
        e->token_acc = (double)tok / (double)(samples * Tt);
        e->seq_acc = (double)seq / (double)samples;
        e->loss = loss / (double)samples;
        for (size_t j = 0; j < Tt; j++)
            e->pos_acc[j] /= (double)samples;
    }
    gsl_rng_free(r);
    batch_free(&b);
    free(pred);
    return rc;
}

/* Decodes the B examples idx of one bucket (in b, pred of room B·Tt) and adds to e:
 * correct tokens and sequences, tokens per position, and the loss summed per token. */
static int eval_examples(model *m, const task *t, const size_t *idx, size_t B, batch *b,
                         int *pred, eval_result *e, size_t *tok, size_t *ntok, size_t *seq,
                         double *loss, size_t *reach, char *err, size_t n)
{
    task_fill_examples(t, b, idx, B);
    const size_t Ts = b->Ts, Tt = b->Tt;
    if (model_decode(m, b->src, B, Ts, Tt, pred) != 0) {
        snprintf(err, n, "%s decode failed at length %zu: %s", m->ops->name, Ts,
                 model_last_error());
        return -1;
    }
    for (size_t i = 0; i < B; i++) {
        size_t ok = 0;
        for (size_t j = 0; j < Tt; j++) {
            const int hit = pred[i * Tt + j] == b->tgt[i * Tt + j];
            ok += (size_t)hit;
            e->pos_acc[j] += hit;
            reach[j]++;
        }
        *tok += ok;
        *seq += ok == Tt;
        bleu_add(&e->bleu, pred + i * Tt, Tt, b->tgt + i * Tt, Tt);
    }
    const double l = model_forward(m, b, NULL);
    if (isnan(l)) {
        snprintf(err, n, "%s forward failed at length %zu: %s", m->ops->name, Ts,
                 model_failure());
        return -1;
    }
    *loss += l * (double)(B * Tt); /* the forward's mean is per token */
    *ntok += B * Tt;
    return 0;
}

int eval_data_run(model *m, const task *t, dataset_set s, const size_t *lens, size_t nl,
                  const volatile sig_atomic_t *stop, eval_result *out, char *err, size_t n)
{
    const dataset *d = t->data;
    const dataset_range bs = d->buckets[s];
    memset(out, 0, nl * sizeof *out);
    for (size_t k = 0; k < nl; k++)
        if (lens[k] == 0 || lens[k] > m->cfg.max_len) {
            snprintf(err, n, "evaluation length %zu is outside 1..%zu (the model's max_len)",
                     lens[k], m->cfg.max_len);
            return -1;
        }
    /* room for the largest bucket chunk of the set */
    size_t Lmax = 1, Tmax = 1;
    for (size_t i = bs.first; i < bs.first + bs.count; i++) {
        Lmax = d->b[i].Ts > Lmax ? d->b[i].Ts : Lmax;
        Tmax = d->b[i].Tt > Tmax ? d->b[i].Tt : Tmax;
    }
    batch b;
    int *pred = malloc(EVAL_CHUNK * Tmax * sizeof *pred);
    size_t *idx = malloc(EVAL_CHUNK * sizeof *idx), *reach = calloc(Tmax, sizeof *reach);
    if (!pred || !idx || !reach || batch_alloc(&b, EVAL_CHUNK, Lmax, Tmax) != 0 ||
        m->ops->reserve(m, EVAL_CHUNK, Lmax, Tmax) != 0) {
        snprintf(err, n, "out of memory for evaluating sequences of length %zu", Lmax);
        free(pred);
        free(idx);
        free(reach);
        return -1;
    }
    int rc = 0;
    for (size_t k = 0; k < nl && rc == 0; k++) {
        eval_result *e = &out[k];
        e->len = lens[k];
        for (size_t i = bs.first; i < bs.first + bs.count; i++)
            if (d->b[i].Ts == lens[k] && d->b[i].Tt > e->tlen)
                e->tlen = d->b[i].Tt;
        if (e->tlen == 0) {
            snprintf(err, n, "%s has no %s example of source length %zu", t->name,
                     s == DATASET_TEST ? "test" : s == DATASET_VAL ? "validation" : "training",
                     lens[k]);
            rc = -1;
            break;
        }
        if (!(e->pos_acc = calloc(e->tlen, sizeof(double)))) {
            snprintf(err, n, "out of memory");
            rc = -1;
            break;
        }
        memset(reach, 0, Tmax * sizeof *reach);
        size_t tok = 0, ntok = 0, seq = 0;
        double loss = 0;
        for (size_t i = bs.first; i < bs.first + bs.count && rc == 0; i++) {
            const dataset_bucket *bk = &d->b[i];
            if (bk->Ts != lens[k])
                continue;
            for (size_t done = 0; done < bk->ex.count && rc == 0; done += EVAL_CHUNK) {
                if (stop && *stop) {
                    rc = EVAL_STOPPED;
                    break;
                }
                const size_t B = bk->ex.count - done < EVAL_CHUNK ? bk->ex.count - done
                                                                  : EVAL_CHUNK;
                for (size_t j = 0; j < B; j++)
                    idx[j] = bk->ex.first + done + j;
                rc = eval_examples(m, t, idx, B, &b, pred, e, &tok, &ntok, &seq, &loss, reach,
                                   err, n);
                e->samples += B;
            }
        }
        if (rc != 0)
            break;
        e->token_acc = (double)tok / (double)ntok;
        e->seq_acc = (double)seq / (double)e->samples;
        e->loss = loss / (double)ntok;
        for (size_t j = 0; j < e->tlen; j++)
            e->pos_acc[j] /= (double)reach[j];
    }
    if (rc != 0)
        eval_free(out, nl);
    batch_free(&b);
    free(pred);
    free(idx);
    free(reach);
    return rc;
}

void eval_free(eval_result *r, size_t nl)
{
    for (size_t k = 0; k < nl; k++) {
        free(r[k].pos_acc);
        r[k].pos_acc = NULL;
    }
}

int eval_write_tsv(FILE *f, const char *model_name, const eval_result *r, size_t nl)
{
    fprintf(f, "model\tlen\tsamples\ttoken_acc\tseq_acc\tloss\n");
    for (size_t k = 0; k < nl; k++)
        fprintf(f, "%s\t%zu\t%zu\t%.6f\t%.6f\t%.6g\n", model_name, r[k].len, r[k].samples,
                r[k].token_acc, r[k].seq_acc, r[k].loss);
    return ferror(f) ? -1 : 0;
}

int eval_write_positions_tsv(FILE *f, const char *model_name, const eval_result *r,
                             size_t nl)
{
    fprintf(f, "model\tlen\tposition\taccuracy\n");
    for (size_t k = 0; k < nl; k++)
        for (size_t j = 0; j < r[k].tlen; j++)
            fprintf(f, "%s\t%zu\t%zu\t%.6f\n", model_name, r[k].len, j + 1, r[k].pos_acc[j]);
    return ferror(f) ? -1 : 0;
}

int eval_write_bleu_tsv(FILE *f, const char *model_name, const eval_result *r, size_t nl)
{
    fprintf(f, "model\tlen\tsamples\thyp_len\tref_len");
    for (int n = 1; n <= BLEU_N; n++)
        fprintf(f, "\tmatch%d\ttotal%d", n, n);
    fprintf(f, "\tbleu\n");
    for (size_t k = 0; k < nl; k++) {
        const bleu_stats *s = &r[k].bleu;
        fprintf(f, "%s\t%zu\t%zu\t%zu\t%zu", model_name, r[k].len, r[k].samples, s->hyp_len,
                s->ref_len);
        for (int n = 0; n < BLEU_N; n++)
            fprintf(f, "\t%zu\t%zu", s->match[n], s->total[n]);
        fprintf(f, "\t%.6f\n", bleu_score(s));
    }
    return ferror(f) ? -1 : 0;
}

void eval_print(FILE *f, const char *model_name, const eval_result *r, size_t nl)
{
    fprintf(f, "%-14s %6s %8s %10s %10s %10s\n", "model", "length", "samples", "token_acc",
            "seq_acc", "loss");
    for (size_t k = 0; k < nl; k++)
        fprintf(f, "%-14s %6zu %8zu %10.4f %10.4f %10.4g\n", model_name, r[k].len,
                r[k].samples, r[k].token_acc, r[k].seq_acc, r[k].loss);
}

size_t eval_default_lengths(const config *c, size_t *out, size_t max)
{
    const size_t top = 2 * c->train_max < c->max_len ? 2 * c->train_max : c->max_len;
    const size_t step = top / 16 ? top / 16 : 1;
    size_t n = 0;
    for (size_t L = step; L <= top && n < max; L += step)
        out[n++] = L;
    return n;
}
