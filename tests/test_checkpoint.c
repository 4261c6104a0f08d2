/* test_checkpoint.c — saving and loading a checkpoint: round trips, paths and the
 * settings added after the first checkpoints (suite: checkpoint).
 *
 * Design. The model is testckpt's fake (parameters only), loaded through
 * ckpt_load_with and its own lookup, so these tests do not depend on which real models
 * are built; only the settings added later use the real registry, since they are the
 * real models' settings. A round trip must give back the same bits, configuration and
 * training state; a save that fails, or is refused, must leave the file at its path as
 * it was and no temporary file beside it. The bytes of the file and what a damaged or
 * crafted one makes the loader say are test_checkpoint_format.c's.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/core/checkpoint.h"
#include "../common/core/model.h"
#include "testckpt.h"
#include "testutil.h"

/* ---- round trips ------------------------------------------------------------------ */

START_TEST(test_round_trip)
{
    tk_scratch s;
    tk_scratch_open(&s);
    model *m = tk_fake_model(1);
    /* Values whose bits a careless encoding would lose (NaN and the infinities are not
     * stored at all: test_nonfinite_not_saved) */
    double *x = m->params.data;
    x[0] = -0.0;
    x[1] = -DBL_MIN;
    x[2] = nextafter(1.0, 2.0);
    x[3] = -DBL_MAX;
    x[4] = DBL_TRUE_MIN;
    x[5] = DBL_MAX;
    x[6] = 1.0 / 3.0;
    tk_save_ok(s.path, m, NULL);

    char err[512] = "";
    ckpt_train_state ts;
    memset(&ts, 0xAB, sizeof ts); /* must come back zeroed: the file holds no state */
    model *b = ckpt_load_with(s.path, tk_fake_lookup, &ts, err, sizeof err);
    ck_assert_msg(b != NULL, "load failed: %s", err);
    ck_assert_ptr_eq(b->ops, &tk_fake_ops);
    tk_assert_same_params(m, b);
    tk_assert_same_config(&m->cfg, &b->cfg);
    for (size_t i = 0; i < b->params.size; i++)
        ck_assert(b->params.grad[i] == 0.0);
    ck_assert_ptr_null(ts.m);
    ck_assert_ptr_null(ts.v);
    ck_assert_uint_eq(ts.n, 0);
    ck_assert_uint_eq(ts.step, 0);
    for (int k = 0; k < CKPT_RNG_STREAMS; k++)
        ck_assert_ptr_null(ts.rng[k]);
    ck_assert_uint_eq(tk_count_entries(s.dir), 1); /* no temporary file left */
    tk_fake_free(b);
    tk_fake_free(m);
    tk_scratch_close(&s);
}
END_TEST

START_TEST(test_round_trip_train_state)
{
    tk_scratch s;
    tk_scratch_open(&s);
    model *m = tk_fake_model(2);
    ckpt_train_state ts;
    gsl_rng *streams[3];
    tk_fake_train_state(&ts, m, streams);
    tk_save_ok(s.path, m, &ts);

    char err[512] = "";
    ckpt_train_state back;
    model *b = ckpt_load_with(s.path, tk_fake_lookup, &back, err, sizeof err);
    ck_assert_msg(b != NULL, "load failed: %s", err);
    tk_assert_same_params(m, b);
    tk_assert_same_config(&m->cfg, &b->cfg);
    ck_assert_uint_eq(back.step, 12345);
    ck_assert_uint_eq(back.n, m->params.size);
    ck_assert(memcmp(back.m, ts.m, ts.n * sizeof(double)) == 0);
    ck_assert(memcmp(back.v, ts.v, ts.n * sizeof(double)) == 0);
    /* A generator restored from the stored bytes continues exactly where it stopped. */
    for (int k = 0; k < CKPT_RNG_STREAMS; k++) {
        ck_assert_uint_eq(back.rng_size[k], ts.rng_size[k]);
        gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
        ck_assert_uint_eq(gsl_rng_size(r), back.rng_size[k]);
        memcpy(gsl_rng_state(r), back.rng[k], back.rng_size[k]);
        for (int d = 0; d < 20; d++)
            ck_assert_uint_eq(gsl_rng_get(r), gsl_rng_get(streams[k]));
        gsl_rng_free(r);
        gsl_rng_free(streams[k]);
    }
    tk_fake_free(b);

    /* A caller that does not resume passes NULL and still gets the model. */
    b = ckpt_load_with(s.path, tk_fake_lookup, NULL, err, sizeof err);
    ck_assert_msg(b != NULL, "load failed: %s", err);
    tk_assert_same_params(m, b);
    tk_fake_free(b);

    ckpt_train_state_free(&back);
    ck_assert_ptr_null(back.m);
    ckpt_train_state_free(&back); /* safe twice */
    ckpt_train_state_free(&ts);
    tk_fake_free(m);
    tk_scratch_close(&s);
}
END_TEST
/* Saving over an existing checkpoint replaces it whole. */
START_TEST(test_save_replaces)
{
    tk_scratch s;
    tk_scratch_open(&s);
    model *a = tk_fake_model(4), *b = tk_fake_model(5);
    tk_save_ok(s.path, a, NULL);
    tk_save_ok(s.path, b, NULL);
    char err[512] = "";
    model *c = ckpt_load_with(s.path, tk_fake_lookup, NULL, err, sizeof err);
    ck_assert_msg(c != NULL, "load failed: %s", err);
    tk_assert_same_params(b, c);
    ck_assert_uint_eq(tk_count_entries(s.dir), 1);
    tk_fake_free(a);
    tk_fake_free(b);
    tk_fake_free(c);
    tk_scratch_close(&s);
}
END_TEST

/* ---- settings added later ------------------------------------------------------------ */

/* A switch added to a model after checkpoints of it were written: the model, the key,
 * where the key lives in struct config, and the tensors it adds. */
static const struct later_switch {
    const char *model, *key;
    size_t offset;    /* of its int in struct config */
    size_t tensors;   /* tensors it adds when on */
} later[] = {{"lstm", "feed_context", offsetof(config, feed_context), 1},
             {"rnn_attention", "bidirectional", offsetof(config, bidirectional), 5}};


/* Takes the line `line` out of the configuration text of a real model's checkpoint b (the
 * text starts with the header "key<TAB>value", after its u64 length), and reseals. */
static void drop_config_line(unsigned char **b, size_t *len, const char *line)
{
    unsigned char *text = tk_find(*b, *len, "key\tvalue\n", 10);
    unsigned char *hit = tk_find(*b, *len, line, strlen(line));
    ck_assert(text != NULL && hit != NULL && text >= *b + 8 && hit > text);
    const size_t cfg_at = (size_t)(text - *b) - 8, at = (size_t)(hit - *b), n = strlen(line);
    const uint64_t cfg_len = tk_rd64(*b + cfg_at);
    memmove(*b + at, *b + at + n, *len - at - n);
    *len -= n;
    tk_wr64(*b + cfg_at, cfg_len - n);
    tk_reseal(*b, *len);
}

/* A small model of the real registry, with the switch set to on (0 or 1). */
static model *later_model(const struct later_switch *ls, int on)
{
    config c;
    config_defaults(&c);
    const model_ops *ops = model_lookup(ls->model);
    ck_assert_ptr_nonnull(ops);
    ops->defaults(&c);
    snprintf(c.model, sizeof c.model, "%s", ls->model);
    c.symbols = 4;
    c.embed = 3;
    c.hidden = 5;
    c.attn = 2;
    *(int *)((char *)&c + ls->offset) = on;
    model *m = ops->alloc(&c);
    ck_assert_ptr_nonnull(m);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    ops->init(m, r);
    gsl_rng_free(r);
    return m;
}

/* feed_context (lstm) and bidirectional (rnn_attention) came after the first checkpoints
 * of their models. Off, the key is not written at all, so the file is the one an earlier
 * build wrote (the golden test holds its bytes); read back, a file without the key is the
 * old model. On, the key is written and read back. And a file of the new model whose key
 * is taken out reads as the old model, whose parameters are not those the file holds: it
 * is refused, not half-read. */
START_TEST(test_later_switch_reads_as_old)
{
    const struct later_switch *ls = &later[_i];
    char err[512] = "", line[64];
    tk_scratch sc;
    tk_scratch_open(&sc);
    snprintf(line, sizeof line, "%s\t1\n", ls->key);
    for (int on = 0; on <= 1; on++) {
        model *m = later_model(ls, on);
        tk_save_ok(sc.path, m, NULL);
        size_t len;
        unsigned char *b = tk_read_all(sc.path, &len);
        ck_assert_msg((tk_find(b, len, ls->key, strlen(ls->key)) != NULL) == on,
                      "%s=%d: the key is %s the file", ls->key, on, on ? "not in" : "in");
        free(b);
        model *back = ckpt_load(sc.path, NULL, err, sizeof err);
        ck_assert_msg(back != NULL, "%s", err);
        ck_assert_int_eq(*(const int *)((const char *)&back->cfg + ls->offset), on);
        ck_assert_uint_eq(back->params.n_tensors, m->params.n_tensors);
        tk_assert_same_params(m, back);
        back->ops->free(back);
        if (on) { /* the same file without its key: the old model, refused by its size */
            model *old = later_model(ls, 0);
            ck_assert_uint_eq(m->params.n_tensors, old->params.n_tensors + ls->tensors);
            old->ops->free(old);
            b = tk_read_all(sc.path, &len);
            drop_config_line(&b, &len, line);
            tk_write_all(sc.path, b, len);
            free(b);
            ck_assert_ptr_null(ckpt_load(sc.path, NULL, err, sizeof err));
            ck_assert_msg(strstr(err, "the configuration implies") != NULL, "%s", err);
        }
        m->ops->free(m);
    }
    tk_scratch_close(&sc);
}
END_TEST


/* ckpt_load asks the real registry, which has no model called "fake". */
START_TEST(test_registry_lookup)
{
    tk_scratch s;
    tk_scratch_open(&s);
    model *m = tk_fake_model(9);
    tk_save_ok(s.path, m, NULL);
    char err[512] = "";
    ck_assert_ptr_null(ckpt_load(s.path, NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "model 'fake' is not in this build"), "%s", err);
    tk_fake_free(m);
    tk_scratch_close(&s);
}
END_TEST

/* ---- paths ------------------------------------------------------------------------ */

START_TEST(test_missing_file)
{
    tk_load_fails("/tmp/attnlab-no-such-dir/none.ckpt",
               "cannot open (No such file or directory)");
}
END_TEST

START_TEST(test_not_a_file)
{
    tk_scratch s;
    tk_scratch_open(&s);
    tk_load_fails(s.dir, "is a directory, not a checkpoint file");
    /* A FIFO would block a plain open; it must be refused at once. */
    char fifo[160];
    snprintf(fifo, sizeof fifo, "%s/fifo", s.dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    tk_load_fails(fifo, "is not a regular file");

    model *m = tk_fake_model(10);
    char err[512] = "";
    ck_assert_int_eq(ckpt_save(s.dir, m, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "is a directory"), "%s", err);
    ck_assert_uint_eq(tk_count_entries(s.dir), 1); /* only the FIFO */
    tk_fake_free(m);
    tk_scratch_close(&s);
}
END_TEST

START_TEST(test_unwritable)
{
    tk_scratch s;
    tk_scratch_open(&s);
    model *m = tk_fake_model(11);
    char err[512] = "";
    /* A path under a regular file fails with ENOTDIR, even for root. */
    char file[160], under[200];
    snprintf(file, sizeof file, "%s/plain", s.dir);
    tk_write_all(file, "x", 1);
    snprintf(under, sizeof under, "%s/model.ckpt", file);
    ck_assert_int_eq(ckpt_save(under, m, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "cannot create a temporary file in its directory (Not a "
                              "directory)"), "%s", err);
    ck_assert_int_eq(ckpt_save("/tmp/attnlab-no-such-dir/x.ckpt", m, NULL, err, sizeof err),
                     -1);
    ck_assert_msg(strstr(err, "No such file or directory"), "%s", err);
    /* Permissions stop everyone but root, who writes anywhere: only tested without it. */
    if (geteuid() != 0) {
        char ro[160], path[200];
        snprintf(ro, sizeof ro, "%s/readonly", s.dir);
        ck_assert_int_eq(mkdir(ro, 0500), 0);
        snprintf(path, sizeof path, "%s/model.ckpt", ro);
        ck_assert_int_eq(ckpt_save(path, m, NULL, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "Permission denied"), "%s", err);
    }
    tk_fake_free(m);
    tk_scratch_close(&s);
}
END_TEST

/* A save that fails halfway (the file-size limit stops the write, as a full disk would)
 * leaves the earlier checkpoint at the path exactly as it was, and no temporary file. */
START_TEST(test_failed_save_keeps_old)
{
    tk_scratch s;
    tk_scratch_open(&s);
    model *old = tk_fake_model(12), *next = tk_fake_model(13);
    tk_save_ok(s.path, old, NULL);
    size_t len;
    unsigned char *before = tk_read_all(s.path, &len);

    struct rlimit keep;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &keep), 0);
    struct rlimit small = keep;
    small.rlim_cur = len / 2;
    void (*handler)(int) = signal(SIGXFSZ, SIG_IGN); /* get EFBIG, not a killed process */
    /* no assertion while the limit holds: Check records each one in a file of its own,
     * which the limit would cut short too */
    const int limited = setrlimit(RLIMIT_FSIZE, &small);
    char err[512] = "";
    int rc = ckpt_save(s.path, next, NULL, err, sizeof err);
    const int restored = setrlimit(RLIMIT_FSIZE, &keep);
    signal(SIGXFSZ, handler);
    ck_assert_int_eq(limited, 0);
    ck_assert_int_eq(restored, 0);
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err, "cannot write") && strstr(err, "File too large") &&
                  strstr(err, "earlier file at this path is unchanged"), "%s", err);

    /* A save refused before writing (inconsistent training state) changes nothing. */
    ckpt_train_state ts;
    gsl_rng *streams[3];
    tk_fake_train_state(&ts, next, streams);
    ts.n--;
    ck_assert_int_eq(ckpt_save(s.path, next, &ts, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "training state has 43 moments per array but the model has "
                             "44 parameters"), "%s", err);
    ts.n++;
    free(ts.rng[1]);
    ts.rng[1] = NULL;
    ck_assert_int_eq(ckpt_save(s.path, next, &ts, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "generator stream 1 has no state"), "%s", err);

    size_t len2;
    unsigned char *after = tk_read_all(s.path, &len2);
    ck_assert_uint_eq(len2, len);
    ck_assert(memcmp(before, after, len) == 0);
    ck_assert_uint_eq(tk_count_entries(s.dir), 1);
    model *b = ckpt_load_with(s.path, tk_fake_lookup, NULL, err, sizeof err);
    ck_assert_msg(b != NULL, "load failed: %s", err);
    tk_assert_same_params(old, b);

    for (int k = 0; k < 3; k++)
        gsl_rng_free(streams[k]);
    ckpt_train_state_free(&ts);
    free(before);
    free(after);
    tk_fake_free(b);
    tk_fake_free(old);
    tk_fake_free(next);
    tk_scratch_close(&s);
}
END_TEST

/* A save refuses what the loader would refuse: a weight or a moment that is not finite,
 * named with its index; the file at the path is left as it was. */
START_TEST(test_nonfinite_not_saved)
{
    tk_scratch s;
    tk_scratch_open(&s);
    model *old = tk_fake_model(14), *next = tk_fake_model(15);
    tk_save_ok(s.path, old, NULL);
    size_t len;
    unsigned char *before = tk_read_all(s.path, &len);
    char err[512] = "";
    next->params.data[20 + 2] = NAN; /* index 2 of enc.b */
    ck_assert_int_eq(ckpt_save(s.path, next, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "tensor 'enc.b' holds NaN at index 2: not saved"), "%s", err);
    next->params.data[20 + 2] = 0.5;
    ckpt_train_state ts;
    gsl_rng *streams[3];
    tk_fake_train_state(&ts, next, streams);
    ts.m[7] = -INFINITY;
    ck_assert_int_eq(ckpt_save(s.path, next, &ts, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "Adam's first moment m holds -inf at index 7: not saved"), "%s",
                  err);
    size_t len2;
    unsigned char *after = tk_read_all(s.path, &len2);
    ck_assert(len2 == len && memcmp(before, after, len) == 0);
    ck_assert_uint_eq(tk_count_entries(s.dir), 1);
    for (int k = 0; k < 3; k++)
        gsl_rng_free(streams[k]);
    ckpt_train_state_free(&ts);
    free(before);
    free(after);
    tk_fake_free(old);
    tk_fake_free(next);
    tk_scratch_close(&s);
}
END_TEST

/* Messages fit any buffer: a short one is cut, not overrun; none at all is allowed. */
START_TEST(test_small_error_buffer)
{
    char err[12];
    memset(err, 'x', sizeof err);
    ck_assert_ptr_null(ckpt_load_with("/tmp/attnlab-no-such-dir/none.ckpt", tk_fake_lookup,
                                      NULL, err, sizeof err));
    ck_assert_uint_eq(strlen(err), sizeof err - 1);
    ck_assert_ptr_null(ckpt_load_with("/tmp/attnlab-no-such-dir/none.ckpt", tk_fake_lookup,
                                      NULL, NULL, 0));
    ck_assert_int_eq(ckpt_save("", NULL, NULL, NULL, 0), -1);
}
END_TEST

Suite *make_checkpoint_suite(void)
{
    Suite *s = suite_create("checkpoint");
    TCase *tc = tcase_create("round trip");
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_round_trip_train_state);
    tcase_add_test(tc, test_save_replaces);
    tcase_add_loop_test(tc, test_later_switch_reads_as_old, 0,
                        (int)(sizeof later / sizeof later[0]));
    suite_add_tcase(s, tc);

    tc = tcase_create("rejections");
    tcase_add_test(tc, test_registry_lookup);
    tcase_add_test(tc, test_missing_file);
    tcase_add_test(tc, test_not_a_file);
    tcase_add_test(tc, test_unwritable);
    tcase_add_test(tc, test_failed_save_keeps_old);
    tcase_add_test(tc, test_nonfinite_not_saved);
    tcase_add_test(tc, test_small_error_buffer);
    suite_add_tcase(s, tc);
    return s;
}
