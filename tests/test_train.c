/* test_train.c — the training loop and evaluation end to end: each model learns the
 * copy task within a bounded, seeded number of steps, and a run is reproducible from its
 * seed, bit for bit. Tagged "slow": `make check-fast` skips them. */
#include <check.h>
#include <string.h>

#include "../common/eval.h"
#include "../common/model.h"
#include "../common/rng.h"
#include "../common/task.h"
#include "../common/train.h"
#include "testutil.h"

/* Trains model `name` with the settings of c (after the model's defaults) and returns
 * the greedy token accuracy at length L on 256 evaluation sequences. When params is not
 * NULL, copies the final parameter block into it (n doubles at most). */
static double train_then_eval(const char *name, void (*setup)(config *), size_t L,
                              double *params, size_t n)
{
    config c;
    char err[256];
    config_defaults(&c);
    const model_ops *ops = model_lookup(name);
    ck_assert_ptr_nonnull(ops);
    ops->defaults(&c);
    strcpy(c.model, name);
    setup(&c);
    ck_assert_int_eq(ops->check(&c, err, sizeof err), 0);
    rng_streams r;
    ck_assert_int_eq(rng_open(&r, c.seed), 0);
    model *m = ops->alloc(&c);
    ck_assert_ptr_nonnull(m);
    ops->init(m, r.s[RNG_INIT]);
    train_summary ts;
    optim o;
    ck_assert_int_eq(optim_alloc(&o, m->params.size, c.beta1, c.beta2, c.eps), 0);
    const task *t = task_lookup(c.task);
    ck_assert_msg(train_run(m, t, &c, &r, &o, 1, NULL, TRAIN_QUIET, NULL, &ts, err,
                            sizeof err) == TRAIN_DONE,
                  "%s", err);
    optim_free(&o);
    eval_result e;
    ck_assert_msg(eval_run(m, t, &L, 1, 256, c.seed, &e, err, sizeof err) == 0, "%s", err);
    double acc = e.token_acc;
    eval_free(&e, 1);
    if (params)
        memcpy(params, m->params.data, (n < m->params.size ? n : m->params.size) * sizeof *params);
    ops->free(m);
    rng_close(&r);
    return acc;
}

/* The LSTM on copy at length 5 (issue of the foundation: >= 99% token accuracy). */
static void lstm_copy5(config *c)
{
    c->embed = 16;
    c->hidden = 64;
    c->train_min = c->train_max = 5;
    c->steps = 1200;
    c->lr = 1e-2;
    c->seed = 3;
}

START_TEST(lstm_learns_copy)
{
    double acc = train_then_eval("lstm", lstm_copy5, 5, NULL, 0);
    ck_assert_msg(acc >= 0.99, "lstm token accuracy at length 5: %.4f (want >= 0.99)", acc);
}
END_TEST


/* rnn_attention on copy at length 12, its default recipe (>= 99% token accuracy). */
static void attn_copy12(config *c)
{
    c->train_min = c->train_max = 12;
    c->steps = 800;
    c->seed = 1;
}

START_TEST(rnn_attention_learns_copy)
{
    double acc = train_then_eval("rnn_attention", attn_copy12, 12, NULL, 0);
    ck_assert_msg(acc >= 0.99, "rnn_attention token accuracy at length 12: %.4f (want >= 0.99)",
                  acc);
}
END_TEST


/* The transformer on copy at length 12, its default recipe (>= 99% token accuracy). */
static void tfm_copy12(config *c)
{
    c->train_min = c->train_max = 12;
    c->steps = 1000;
    c->seed = 1;
}

START_TEST(transformer_learns_copy)
{
    double acc = train_then_eval("transformer", tfm_copy12, 12, NULL, 0);
    ck_assert_msg(acc >= 0.99, "transformer token accuracy at length 12: %.4f (want >= 0.99)",
                  acc);
}
END_TEST

/* A short run for the determinism tests. */
static unsigned long det_seed;
static void short_run(config *c)
{
    c->embed = 8;
    c->hidden = 12;
    c->train_min = 3;
    c->train_max = 7;
    c->steps = 40;
    c->seed = det_seed;
}

START_TEST(same_seed_same_weights)
{
    enum { N = 4096 };
    static double a[N], b[N], d[N];
    det_seed = 7;
    double acc_a = train_then_eval("lstm", short_run, 6, a, N);
    double acc_b = train_then_eval("lstm", short_run, 6, b, N);
    ck_assert_int_eq(memcmp(a, b, sizeof a), 0); /* bit for bit */
    ck_assert(acc_a == acc_b);
    det_seed = 8;
    train_then_eval("lstm", short_run, 6, d, N);
    ck_assert_int_ne(memcmp(a, d, sizeof a), 0); /* another seed, other weights */
}
END_TEST

Suite *make_train_suite(void)
{
    Suite *s = suite_create("train");
    TCase *tc = tcase_create("learning");
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, lstm_learns_copy);
    tcase_add_test(tc, rnn_attention_learns_copy);
    tcase_add_test(tc, transformer_learns_copy);
    suite_add_tcase(s, tc);
    tc = tcase_create("determinism");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, same_seed_same_weights);
    suite_add_tcase(s, tc);
    return s;
}
