/* test_checkpoint.c — the CRC-32 and the checkpoint file format (suite: checkpoint).
 *
 * Design. The tests need a model but must not depend on which real models are built, so
 * they define a model "fake" that has only a parameter arena, with shapes taken from
 * cfg.hidden (H) and cfg.embed (E), and load through ckpt_load_with and a lookup that
 * knows it. H = 4 and E = 5 differ, so a transposed shape cannot pass unnoticed.
 *
 * To provoke each rejection, a test saves a good file, edits bytes at offsets found by
 * walking the layout of docs/checkpoint-format.md (an independent reading of the
 * documented format), and, where the edit must get past the checksums, recomputes the
 * header CRC, the recorded length and the final CRC, so the check under test is the one
 * that fires. Every rejection must be one line starting "checkpoint PATH: ".
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/core/checkpoint.h"
#include "../common/core/crc32.h"
#include "../common/core/model.h"
#include "testutil.h"

/* ---- the fake model --------------------------------------------------------------- */

#define FAKE_TENSORS 3
#define FAKE_H 4
#define FAKE_E 5

static const model_ops fake_ops;

static void fake_defaults(config *c)
{
    c->hidden = FAKE_H;
    c->embed = FAKE_E;
}

/* Accepts hidden up to 16, so that a stored configuration can fail the model's check. */
static int fake_check(const config *c, char *err, size_t n)
{
    if (c->hidden > 16) {
        snprintf(err, n, "--hidden: %zu is out of range for model fake (accepted: 1 to 16)",
                 c->hidden);
        return -1;
    }
    return 0;
}

static model *fake_alloc(const config *c)
{
    model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    /* enc.Wx (H, E), enc.b (1, H), dec.Wx (E, H) */
    arena_spec spec[FAKE_TENSORS] = {
        {"enc.Wx", c->hidden, c->embed},
        {"enc.b", 1, c->hidden},
        {"dec.Wx", c->embed, c->hidden},
    };
    if (arena_alloc(&m->params, spec, FAKE_TENSORS) != 0) {
        free(m);
        return NULL;
    }
    m->ops = &fake_ops;
    m->cfg = *c;
    return m;
}

static void fake_free(model *m)
{
    if (!m)
        return;
    arena_free(&m->params);
    free(m);
}

/* The parameter count the fake's size table implies (H·E + H + E·H). */
static size_t fake_n_params(const config *c)
{
    return 2 * c->hidden * c->embed + c->hidden;
}

static const model_ops fake_ops = {
    .name = "fake",
    .about = "parameters only, for the checkpoint tests",
    .defaults = fake_defaults,
    .check = fake_check,
    .alloc = fake_alloc,
    .free = fake_free,
    .n_params = fake_n_params,
};

static const model_ops *fake_lookup(const char *name)
{
    return strcmp(name, "fake") == 0 ? &fake_ops : NULL;
}

/* A fake model of the default sizes with non-round parameters drawn from seed. */
static model *fake_model(unsigned long seed)
{
    config c;
    config_defaults(&c);
    fake_defaults(&c);
    strcpy(c.model, "fake");
    c.lr = 3.0e-4; /* a value that is not the default, to see it come back */
    c.seed = 987654321;
    model *m = fake_alloc(&c);
    ck_assert_ptr_nonnull(m);
    gsl_rng *r = tu_rng(seed);
    for (size_t k = 0; k < m->params.n_tensors; k++)
        tu_fill(arena_w(&m->params, k), 1.7, r);
    gsl_rng_free(r);
    return m;
}

/* A training state for m: step, random moments (v positive), and the states of three
 * mt19937 streams that have drawn a few numbers each, as a training run would leave them.
 * The streams are left open in streams[] for the caller to compare with. */
static void fake_train_state(ckpt_train_state *ts, const model *m, gsl_rng *streams[3])
{
    memset(ts, 0, sizeof *ts);
    ts->step = 12345;
    ts->n = m->params.size;
    ts->m = malloc(ts->n * sizeof(double));
    ts->v = malloc(ts->n * sizeof(double));
    ck_assert(ts->m && ts->v);
    gsl_rng *r = tu_rng(5);
    for (size_t i = 0; i < ts->n; i++) {
        ts->m[i] = 0.01 * (2.0 * gsl_rng_uniform(r) - 1.0);
        ts->v[i] = 1e-5 * gsl_rng_uniform_pos(r);
    }
    gsl_rng_free(r);
    for (int k = 0; k < CKPT_RNG_STREAMS; k++) {
        streams[k] = tu_rng(100 + (unsigned long)k);
        for (int d = 0; d < 7 * (k + 1); d++)
            (void)gsl_rng_get(streams[k]);
        ts->rng_size[k] = gsl_rng_size(streams[k]);
        ts->rng[k] = malloc(ts->rng_size[k]);
        ck_assert_ptr_nonnull(ts->rng[k]);
        memcpy(ts->rng[k], gsl_rng_state(streams[k]), ts->rng_size[k]);
    }
}

/* ---- files ------------------------------------------------------------------------ */

/* A fresh directory for one test, and the checkpoint path inside it. */
typedef struct scratch {
    char dir[64];
    char path[128];
} scratch;

static void scratch_open(scratch *s)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/attnlab-ckpt-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(s->dir));
    snprintf(s->path, sizeof s->path, "%s/model.ckpt", s->dir);
}

/* Removes path and everything under it. */
static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        chmod(path, 0700); /* a test may have made it read-only */
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d))) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                    continue;
                char sub[512];
                snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
                remove_tree(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void scratch_close(scratch *s) { remove_tree(s->dir); }

/* Number of entries in dir besides . and .. (to see that no temporary file is left). */
static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    size_t k = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            k++;
    closedir(d);
    return k;
}

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    ck_assert_int_ge(size, 0);
    rewind(f);
    unsigned char *buf = malloc((size_t)size + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *len = (size_t)size;
    return buf;
}

static void write_all(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

static void save_ok(const char *path, const model *m, const ckpt_train_state *ts)
{
    char err[512] = "";
    ck_assert_msg(ckpt_save(path, m, ts, err, sizeof err) == 0, "save failed: %s", err);
}

/* Loads path, which must be rejected with a message containing expect. The message must
 * be one line naming the file. what names the case in a failure. */
static void load_fails_as(const char *what, const char *path, const char *expect)
{
    char err[512] = "";
    ckpt_train_state ts;
    model *m = ckpt_load_with(path, fake_lookup, &ts, err, sizeof err);
    ck_assert_msg(m == NULL, "%s: loaded although it should fail with '%s'", what, expect);
    ck_assert_msg(strstr(err, expect) != NULL, "%s: message '%s' lacks '%s'", what, err,
                  expect);
    char prefix[160];
    snprintf(prefix, sizeof prefix, "checkpoint %s: ", path);
    ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "message '%s' lacks the file",
                  err);
    ck_assert_msg(strchr(err, '\n') == NULL, "message '%s' is not one line", err);
    ck_assert_ptr_null(ts.m); /* a failed load leaves no training state behind */
    ck_assert_ptr_null(ts.rng[0]);
}

static void load_fails(const char *path, const char *expect)
{
    load_fails_as(path, path, expect);
}

/* ---- the layout, read independently of checkpoint.c ------------------------------- */

static uint64_t rd64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void wr64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void wr32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Offsets of the fields the tests edit. */
typedef struct layout {
    size_t name_at;               /* length of the model name; the name follows */
    size_t cfg_at, cfg_len;       /* length of the configuration; the text follows */
    size_t count_at;              /* tensor count */
    size_t entry_at[FAKE_TENSORS]; /* name length of each table entry */
    size_t data_at;               /* first parameter value */
    size_t train_at;              /* training step; 0 when there is no training state */
    size_t rng_at;                /* number of generator streams */
    size_t crc_at;                /* final CRC */
} layout;

static layout walk(const unsigned char *b, size_t len)
{
    layout L = {0};
    size_t p = 28, P = 0;
    L.name_at = p;
    p += 8 + rd64(b + p);
    L.cfg_at = p;
    L.cfg_len = rd64(b + p);
    p += 8 + L.cfg_len;
    L.count_at = p;
    ck_assert_uint_eq(rd64(b + p), FAKE_TENSORS);
    p += 8;
    for (size_t k = 0; k < FAKE_TENSORS; k++) {
        L.entry_at[k] = p;
        p += 8 + rd64(b + p);
        P += rd64(b + p) * rd64(b + p + 8);
        p += 16;
    }
    L.data_at = p;
    p += 8 * P;
    if (b[12] & 1) {
        L.train_at = p;
        p += 16 + 16 * P;
        L.rng_at = p;
        p += 8;
        for (int k = 0; k < 3; k++)
            p += 8 + rd64(b + p);
    }
    L.crc_at = p;
    ck_assert_uint_eq(p + 4, len);
    return L;
}

/* The first occurrence of needle (k bytes) in hay (n bytes), or NULL. */
static unsigned char *find(unsigned char *hay, size_t n, const char *needle, size_t k)
{
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(hay + i, needle, k) == 0)
            return hay + i;
    return NULL;
}

/* Makes an edited file consistent again: the recorded length, the header CRC and the
 * final CRC, so that only the edited content can be what a loader objects to. */
static void reseal(unsigned char *b, size_t len)
{
    wr64(b + 16, len);
    wr32(b + 24, crc32_update(0, b, 24));
    wr32(b + len - 4, crc32_update(0, b, len - 4));
}

/* Replaces the first occurrence of from in the configuration text by to (lengths may
 * differ), updates the configuration length, and reseals. */
static void edit_config(unsigned char **b, size_t *len, const char *from, const char *to)
{
    layout L = walk(*b, *len);
    size_t text = L.cfg_at + 8, nf = strlen(from), nt = strlen(to);
    unsigned char *hit = find(*b + text, L.cfg_len, from, nf);
    ck_assert_msg(hit != NULL, "'%s' not in the configuration", from);
    size_t at = (size_t)(hit - *b), new_len = *len - nf + nt;
    unsigned char *nb = malloc(new_len);
    ck_assert_ptr_nonnull(nb);
    memcpy(nb, *b, at);
    memcpy(nb + at, to, nt);
    memcpy(nb + at + nt, *b + at + nf, *len - at - nf);
    wr64(nb + L.cfg_at, L.cfg_len - nf + nt);
    free(*b);
    *b = nb;
    *len = new_len;
    reseal(*b, *len);
}

/* ---- settings added later ------------------------------------------------------------ */

/* A switch added to a model after checkpoints of it were written: the model, the key,
 * where the key lives in struct config, and the tensors it adds. */
static const struct later_switch {
    const char *model, *key;
    size_t offset;    /* of its int in struct config */
    size_t tensors;   /* tensors it adds when on */
} later[] = {{"lstm", "feed_context", offsetof(config, feed_context), 1},
             {"rnn_attention", "bidirectional", offsetof(config, bidirectional), 5}};

static void assert_same_params(const model *a, const model *b); /* below, with round trip */

/* Takes the line `line` out of the configuration text of a real model's checkpoint b (the
 * text starts with the header "key<TAB>value", after its u64 length), and reseals. */
static void drop_config_line(unsigned char **b, size_t *len, const char *line)
{
    unsigned char *text = find(*b, *len, "key\tvalue\n", 10);
    unsigned char *hit = find(*b, *len, line, strlen(line));
    ck_assert(text != NULL && hit != NULL && text >= *b + 8 && hit > text);
    const size_t cfg_at = (size_t)(text - *b) - 8, at = (size_t)(hit - *b), n = strlen(line);
    const uint64_t cfg_len = rd64(*b + cfg_at);
    memmove(*b + at, *b + at + n, *len - at - n);
    *len -= n;
    wr64(*b + cfg_at, cfg_len - n);
    reseal(*b, *len);
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
    scratch sc;
    scratch_open(&sc);
    snprintf(line, sizeof line, "%s\t1\n", ls->key);
    for (int on = 0; on <= 1; on++) {
        model *m = later_model(ls, on);
        save_ok(sc.path, m, NULL);
        size_t len;
        unsigned char *b = read_all(sc.path, &len);
        ck_assert_msg((find(b, len, ls->key, strlen(ls->key)) != NULL) == on,
                      "%s=%d: the key is %s the file", ls->key, on, on ? "not in" : "in");
        free(b);
        model *back = ckpt_load(sc.path, NULL, err, sizeof err);
        ck_assert_msg(back != NULL, "%s", err);
        ck_assert_int_eq(*(const int *)((const char *)&back->cfg + ls->offset), on);
        ck_assert_uint_eq(back->params.n_tensors, m->params.n_tensors);
        assert_same_params(m, back);
        back->ops->free(back);
        if (on) { /* the same file without its key: the old model, refused by its size */
            model *old = later_model(ls, 0);
            ck_assert_uint_eq(m->params.n_tensors, old->params.n_tensors + ls->tensors);
            old->ops->free(old);
            b = read_all(sc.path, &len);
            drop_config_line(&b, &len, line);
            write_all(sc.path, b, len);
            free(b);
            ck_assert_ptr_null(ckpt_load(sc.path, NULL, err, sizeof err));
            ck_assert_msg(strstr(err, "the configuration implies") != NULL, "%s", err);
        }
        m->ops->free(m);
    }
    scratch_close(&sc);
}
END_TEST

/* ---- CRC-32 ----------------------------------------------------------------------- */

START_TEST(test_crc32_check_values)
{
    /* The check value every CRC-32 (zlib, PNG, gzip) quotes, and two more well-known
     * values. */
    static const char digits[] = "123456789";
    ck_assert_uint_eq(crc32_update(0, digits, 9), 0xCBF43926u);
    ck_assert_uint_eq(crc32_update(0, NULL, 0), 0u);
    ck_assert_uint_eq(crc32_update(0, "a", 1), 0xE8B7BE43u);
    const char *fox = "The quick brown fox jumps over the lazy dog";
    ck_assert_uint_eq(crc32_update(0, fox, strlen(fox)), 0x414FA339u);
    ck_assert_uint_eq(crc32_update_bitwise(0, digits, 9), 0xCBF43926u);
    /* Carried from call to call, any split gives the CRC of the whole. */
    for (size_t cut = 0; cut <= 9; cut++) {
        uint32_t c = crc32_update(0, digits, cut);
        ck_assert_uint_eq(crc32_update(c, &digits[cut], 9 - cut), 0xCBF43926u);
    }
}
END_TEST

START_TEST(test_crc32_table_matches_bitwise)
{
    gsl_rng *r = tu_rng(3);
    unsigned char buf[300];
    for (size_t len = 0; len <= sizeof buf; len += 7) {
        for (size_t i = 0; i < len; i++)
            buf[i] = (unsigned char)gsl_rng_uniform_int(r, 256);
        uint32_t start = (uint32_t)gsl_rng_get(r);
        ck_assert_uint_eq(crc32_update(start, buf, len),
                          crc32_update_bitwise(start, buf, len));
    }
    gsl_rng_free(r);
}
END_TEST

/* ---- round trips ------------------------------------------------------------------ */

static void assert_same_config(const config *a, const config *b)
{
    char va[128], vb[128];
    for (size_t k = 0; k < config_n_fields; k++) {
        config_format(a, &config_fields[k], va, sizeof va);
        config_format(b, &config_fields[k], vb, sizeof vb);
        ck_assert_msg(strcmp(va, vb) == 0, "%s: %s became %s", config_fields[k].name, va,
                      vb);
    }
}

static void assert_same_params(const model *a, const model *b)
{
    ck_assert_uint_eq(a->params.n_tensors, b->params.n_tensors);
    for (size_t k = 0; k < a->params.n_tensors; k++) {
        ck_assert_str_eq(a->params.spec[k].name, b->params.spec[k].name);
        ck_assert_uint_eq(a->params.spec[k].rows, b->params.spec[k].rows);
        ck_assert_uint_eq(a->params.spec[k].cols, b->params.spec[k].cols);
    }
    ck_assert_uint_eq(a->params.size, b->params.size);
    /* bit-identical: memcmp, not ==, so -0.0 and NaN payloads count too */
    ck_assert(memcmp(a->params.data, b->params.data, a->params.size * sizeof(double)) == 0);
}

START_TEST(test_round_trip)
{
    scratch s;
    scratch_open(&s);
    model *m = fake_model(1);
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
    save_ok(s.path, m, NULL);

    char err[512] = "";
    ckpt_train_state ts;
    memset(&ts, 0xAB, sizeof ts); /* must come back zeroed: the file holds no state */
    model *b = ckpt_load_with(s.path, fake_lookup, &ts, err, sizeof err);
    ck_assert_msg(b != NULL, "load failed: %s", err);
    ck_assert_ptr_eq(b->ops, &fake_ops);
    assert_same_params(m, b);
    assert_same_config(&m->cfg, &b->cfg);
    for (size_t i = 0; i < b->params.size; i++)
        ck_assert(b->params.grad[i] == 0.0);
    ck_assert_ptr_null(ts.m);
    ck_assert_ptr_null(ts.v);
    ck_assert_uint_eq(ts.n, 0);
    ck_assert_uint_eq(ts.step, 0);
    for (int k = 0; k < CKPT_RNG_STREAMS; k++)
        ck_assert_ptr_null(ts.rng[k]);
    ck_assert_uint_eq(count_entries(s.dir), 1); /* no temporary file left */
    fake_free(b);
    fake_free(m);
    scratch_close(&s);
}
END_TEST

START_TEST(test_round_trip_train_state)
{
    scratch s;
    scratch_open(&s);
    model *m = fake_model(2);
    ckpt_train_state ts;
    gsl_rng *streams[3];
    fake_train_state(&ts, m, streams);
    save_ok(s.path, m, &ts);

    char err[512] = "";
    ckpt_train_state back;
    model *b = ckpt_load_with(s.path, fake_lookup, &back, err, sizeof err);
    ck_assert_msg(b != NULL, "load failed: %s", err);
    assert_same_params(m, b);
    assert_same_config(&m->cfg, &b->cfg);
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
    fake_free(b);

    /* A caller that does not resume passes NULL and still gets the model. */
    b = ckpt_load_with(s.path, fake_lookup, NULL, err, sizeof err);
    ck_assert_msg(b != NULL, "load failed: %s", err);
    assert_same_params(m, b);
    fake_free(b);

    ckpt_train_state_free(&back);
    ck_assert_ptr_null(back.m);
    ckpt_train_state_free(&back); /* safe twice */
    ckpt_train_state_free(&ts);
    fake_free(m);
    scratch_close(&s);
}
END_TEST

/* The documented bytes: magic, version, little-endian doubles, readable configuration. */
START_TEST(test_bytes_on_disk)
{
    scratch s;
    scratch_open(&s);
    model *m = fake_model(3);
    m->params.data[0] = 1.0;  /* 0x3FF0000000000000 */
    m->params.data[1] = -2.5; /* 0xC004000000000000 */
    save_ok(s.path, m, NULL);
    size_t len;
    unsigned char *b = read_all(s.path, &len);
    layout L = walk(b, len);
    ck_assert(memcmp(b, "ATTNCKPT", 8) == 0);
    const unsigned char version[4] = {1, 0, 0, 0}, flags[4] = {0, 0, 0, 0};
    ck_assert(memcmp(b + 8, version, 4) == 0);
    ck_assert(memcmp(b + 12, flags, 4) == 0);
    ck_assert_uint_eq(rd64(b + 16), len);
    const unsigned char one[8] = {0, 0, 0, 0, 0, 0, 0xF0, 0x3F};
    const unsigned char minus_2_5[8] = {0, 0, 0, 0, 0, 0, 0x04, 0xC0};
    ck_assert(memcmp(b + L.data_at, one, 8) == 0);
    ck_assert(memcmp(b + L.data_at + 8, minus_2_5, 8) == 0);
    ck_assert(memcmp(b + L.name_at + 8, "fake", 4) == 0);
    ck_assert_ptr_nonnull(find(b + L.cfg_at + 8, L.cfg_len, "\nhidden\t4\n", 10));
    ck_assert_ptr_nonnull(find(b + L.cfg_at + 8, L.cfg_len, "\nmodel\tfake\n", 12));
    free(b);
    fake_free(m);
    scratch_close(&s);
}
END_TEST

/* Saving over an existing checkpoint replaces it whole. */
START_TEST(test_save_replaces)
{
    scratch s;
    scratch_open(&s);
    model *a = fake_model(4), *b = fake_model(5);
    save_ok(s.path, a, NULL);
    save_ok(s.path, b, NULL);
    char err[512] = "";
    model *c = ckpt_load_with(s.path, fake_lookup, NULL, err, sizeof err);
    ck_assert_msg(c != NULL, "load failed: %s", err);
    assert_same_params(b, c);
    ck_assert_uint_eq(count_entries(s.dir), 1);
    fake_free(a);
    fake_free(b);
    fake_free(c);
    scratch_close(&s);
}
END_TEST

/* ---- damaged files ---------------------------------------------------------------- */

/* Prefixes of a good file (every length up to the generator states, a sample of the
 * rest) are refused as truncated, and a cut inside a part names that part. */
START_TEST(test_truncated_everywhere)
{
    scratch s;
    scratch_open(&s);
    model *m = fake_model(6);
    ckpt_train_state ts;
    gsl_rng *streams[3];
    fake_train_state(&ts, m, streams);
    save_ok(s.path, m, &ts);
    size_t len;
    unsigned char *b = read_all(s.path, &len);
    layout L = walk(b, len);
    char cut_path[160];
    snprintf(cut_path, sizeof cut_path, "%s/cut.ckpt", s.dir);
    size_t dec_at = L.data_at + 8 * (FAKE_H * FAKE_E + FAKE_H); /* values of dec.Wx */
    for (size_t cut = 0; cut < len; cut++) {
        /* Every byte up to the generator states, then a sample of those ~15 kB. */
        if (cut > L.rng_at + 32 && cut + 8 < len && cut % 97 != 0)
            continue;
        write_all(cut_path, b, cut);
        const char *part = "truncated";
        if (cut < 28)
            part = "bytes of header";
        else if (cut >= L.cfg_at + 8 && cut < L.cfg_at + 8 + L.cfg_len)
            part = "bytes of configuration";
        else if (cut >= dec_at && cut < L.data_at + 8 * m->params.size)
            part = "bytes of tensor 'dec.Wx'";
        else if (cut >= L.train_at + 16 && cut < L.train_at + 16 + 8 * m->params.size)
            part = "bytes of Adam's first moment m";
        else if (cut >= L.crc_at)
            part = "4 bytes of CRC";
        load_fails(cut_path, "truncated (expected");
        load_fails(cut_path, part);
    }
    /* The exact line for one cut: 3 of the 20 values of dec.Wx are present. */
    write_all(cut_path, b, dec_at + 3 * 8 + 5);
    char expect[256];
    snprintf(expect, sizeof expect, "checkpoint %s: truncated (expected 160 bytes of "
             "tensor 'dec.Wx' at offset %zu, file ends at %zu)", cut_path, dec_at,
             dec_at + 29);
    char err[512];
    ck_assert_ptr_null(ckpt_load_with(cut_path, fake_lookup, NULL, err, sizeof err));
    ck_assert_str_eq(err, expect);
    for (int k = 0; k < 3; k++)
        gsl_rng_free(streams[k]);
    ckpt_train_state_free(&ts);
    free(b);
    fake_free(m);
    scratch_close(&s);
}
END_TEST

/* One flipped byte anywhere is caught: in the magic as a foreign file, in the version as
 * an unsupported version, anywhere else by a CRC. */
START_TEST(test_flip_every_byte)
{
    scratch s;
    scratch_open(&s);
    model *m = fake_model(7);
    for (int with_state = 0; with_state < 2; with_state++) {
        ckpt_train_state ts;
        gsl_rng *streams[3];
        if (with_state)
            fake_train_state(&ts, m, streams);
        save_ok(s.path, m, with_state ? &ts : NULL);
        size_t len;
        unsigned char *b = read_all(s.path, &len);
        char bad[160];
        snprintf(bad, sizeof bad, "%s/flipped.ckpt", s.dir);
        for (size_t i = 0; i < len; i++) {
            if (with_state && i > 200 && i % 37 != 0) /* sample the long state */
                continue;
            unsigned char keep = b[i];
            b[i] ^= (unsigned char)(1u << (i % 8));
            write_all(bad, b, len);
            b[i] = keep;
            if (i < 8)
                load_fails(bad, "not an attnlab checkpoint (bad magic)");
            else if (i < 12)
                load_fails(bad, "is not supported (this build reads version 1)");
            else if (i < 28)
                load_fails(bad, "CRC mismatch in the header");
            else
                load_fails(bad, "the file is corrupt");
        }
        /* The line for a flipped value byte shows both checksums. */
        b[len / 2] ^= 0x40;
        write_all(bad, b, len);
        load_fails(bad, "CRC mismatch (stored 0x");
        free(b);
        if (with_state) {
            for (int k = 0; k < 3; k++)
                gsl_rng_free(streams[k]);
            ckpt_train_state_free(&ts);
        }
    }
    fake_free(m);
    scratch_close(&s);
}
END_TEST

/* Crafted files: each edit gets past the checksums (reseal) so that the check it
 * targets is the one that fires. Table-driven through tcase_add_loop_test. */
typedef struct craft {
    const char *what;                             /* named in a failure */
    int with_state;                               /* save a training state first */
    void (*edit)(unsigned char **b, size_t *len); /* the damage */
    const char *expect;                           /* part of the expected line */
} craft;

static void edit_magic(unsigned char **b, size_t *len)
{
    (void)len;
    memcpy(*b, "ATTNCKPX", 8);
}

static void edit_text_file(unsigned char **b, size_t *len)
{
    memcpy(*b, "hello\n", 6);
    *len = 6;
}

static void edit_version(unsigned char **b, size_t *len)
{
    wr32(*b + 8, 7);
    reseal(*b, *len);
}

static void edit_flags(unsigned char **b, size_t *len)
{
    wr32(*b + 12, (*b)[12] | 0x2);
    reseal(*b, *len);
}

static void edit_trailing(unsigned char **b, size_t *len)
{
    unsigned char *more = realloc(*b, *len + 3);
    ck_assert_ptr_nonnull(more);
    *b = more;
    memcpy(*b + *len, "xyz", 3);
    *len += 3;
}

/* Edits of the configuration text. */
static void edit_shape(unsigned char **b, size_t *len)
{
    edit_config(b, len, "\nhidden\t4\n", "\nhidden\t6\n");
}

static void edit_check(unsigned char **b, size_t *len)
{
    edit_config(b, len, "\nhidden\t4\n", "\nhidden\t99\n");
}

static void edit_key(unsigned char **b, size_t *len)
{
    edit_config(b, len, "\nhidden\t4\n", "\nhidden\t4\nbogus\t1\n");
}

static void edit_cfg_model(unsigned char **b, size_t *len)
{
    edit_config(b, len, "\nmodel\tfake\n", "\nmodel\tfaKe\n");
}

/* Overwrites the model name in the header ("fake" has 4 bytes). */
static void edit_name(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    memcpy(*b + L.name_at + 8, "fakx", 4);
    reseal(*b, *len);
}

/* "task\tcopy" becomes "task\tc\0py": same length, so only the byte is new. */
static void edit_cfg_nul(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    unsigned char *hit = find(*b + L.cfg_at + 8, L.cfg_len, "\ntask\tcopy\n", 11);
    ck_assert_ptr_nonnull(hit);
    hit[7] = '\0';
    reseal(*b, *len);
}

static void edit_name_control(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    (*b)[L.name_at + 10] = 0x1B; /* ESC */
    reseal(*b, *len);
}

static void edit_name_huge(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    wr64(*b + L.name_at, 1ull << 60);
    reseal(*b, *len);
}

static void edit_cfg_huge(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    wr64(*b + L.cfg_at, 1ull << 60);
    reseal(*b, *len);
}

static void edit_count_huge(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    wr64(*b + L.count_at, 1ull << 40);
    reseal(*b, *len);
}

static void edit_count_small(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    wr64(*b + L.count_at, 2);
    reseal(*b, *len);
}

static void edit_tensor_name_huge(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    wr64(*b + L.entry_at[0], 1ull << 60);
    reseal(*b, *len);
}

/* Tensor 0 is "enc.Wx" (6 bytes): its rows follow at entry + 8 + 6. */
static void edit_rows_huge(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    wr64(*b + L.entry_at[0] + 14, 1000000000000ull); /* 10^12 rows of 5: 4e13 bytes */
    reseal(*b, *len);
}

static void edit_rows_overflow(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    wr64(*b + L.entry_at[0] + 14, 1ull << 62); /* rows·cols·8 overflows 64 bits */
    wr64(*b + L.entry_at[0] + 22, 1ull << 62);
    reseal(*b, *len);
}

static void edit_rows_zero(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    wr64(*b + L.entry_at[0] + 14, 0);
    reseal(*b, *len);
}

/* Swaps the shape of enc.Wx to (5, 4): same size, so only the shape check can see it. */
static void edit_transposed(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    wr64(*b + L.entry_at[0] + 14, FAKE_E);
    wr64(*b + L.entry_at[0] + 22, FAKE_H);
    reseal(*b, *len);
}

static void edit_tensor_name(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    (*b)[L.entry_at[0] + 8 + 5] = 'y'; /* enc.Wx -> enc.Wy */
    reseal(*b, *len);
}

static void edit_moments_huge(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    wr64(*b + L.train_at + 8, 1000000000000ull);
    reseal(*b, *len);
}

static void edit_streams(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    wr64(*b + L.rng_at, 4);
    reseal(*b, *len);
}

static void edit_rng_huge(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    wr64(*b + L.rng_at + 8, 1ull << 60);
    reseal(*b, *len);
}

/* A value that is not finite where a checkpoint holds numbers: a NaN (with a payload) at
 * index 17 of enc.Wx (4 x 5), +inf at index 3 of dec.Wx (after enc.Wx and enc.b: 20 + 4
 * values), a NaN at index 5 of Adam's second moment (after the step, the count and the
 * 44 values of m). */
static void edit_nan_weight(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    wr64(*b + L.data_at + 8 * 17, 0x7FF8000000ABCDEFull);
    reseal(*b, *len);
}

static void edit_inf_weight(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    wr64(*b + L.data_at + 8 * (20 + 4 + 3), 0x7FF0000000000000ull);
    reseal(*b, *len);
}

static void edit_nan_moment(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    wr64(*b + L.train_at + 16 + 8 * (44 + 5), 0xFFF8000000000000ull);
    reseal(*b, *len);
}

/* Cuts the file inside the configuration and reseals it there: header, length and CRC
 * agree, but the configuration claims more bytes than the recorded length leaves. */
static void edit_length_short(unsigned char **b, size_t *len)
{
    layout L = walk(*b, *len);
    *len = L.cfg_at + 8 + 10 + 4; /* 10 bytes of configuration, then the CRC */
    reseal(*b, *len);
}

static const craft crafts[] = {
    {"wrong magic", 0, edit_magic, "not an attnlab checkpoint (bad magic)"},
    {"a text file", 0, edit_text_file, "not an attnlab checkpoint (bad magic)"},
    {"wrong version", 0, edit_version,
     "format version 7 is not supported (this build reads version 1)"},
    {"unknown flag", 0, edit_flags, "uses features this build does not know (flags 0x2)"},
    {"trailing bytes", 0, edit_trailing, "unexpected bytes after the end"},
    {"size vs config", 0, edit_shape,
     "the configuration implies 66 parameters but the file holds 44"},
    {"transposed shape", 0, edit_transposed,
     "tensor 'enc.Wx' has shape (5, 4) but the configuration implies (4, 5)"},
    {"tensor renamed", 0, edit_tensor_name,
     "tensor 0 is 'enc.Wy' but the configuration implies 'enc.Wx' there"},
    {"tensor count", 0, edit_count_small,
     "the configuration implies 44 parameters but the file holds 24"},
    {"model check", 0, edit_check,
     "invalid configuration: --hidden: 99 is out of range for model fake"},
    {"unknown key", 0, edit_key, "invalid configuration: configuration line"},
    {"config model", 0, edit_cfg_model,
     "the header names model 'fake' but the configuration says 'faKe'"},
    {"NUL in config", 0, edit_cfg_nul, "configuration text contains a NUL byte"},
    {"unknown model", 0, edit_name, "model 'fakx' is not in this build"},
    {"control char", 0, edit_name_control, "model name is not printable ASCII"},
    {"2^60-byte name", 0, edit_name_huge,
     "model name has length 1152921504606846976 (accepted: 1 to 63)"},
    {"2^60-byte config", 0, edit_cfg_huge, "configuration has length 1152921504606846976"},
    {"2^40 tensors", 0, edit_count_huge, "tensor count 1099511627776 is impossible"},
    {"2^60-byte tensor name", 0, edit_tensor_name_huge,
     "name of tensor 0 has length 1152921504606846976 (accepted: 1 to 47)"},
    {"10^12-element tensor", 0, edit_rows_huge,
     "tensor 'enc.Wx' has shape (1000000000000, 5): more values than the"},
    {"overflowing shape", 0, edit_rows_overflow,
     "tensor 'enc.Wx' has shape (4611686018427387904, 4611686018427387904)"},
    {"empty shape", 0, edit_rows_zero, "tensor 'enc.Wx' has an empty shape (0, 5)"},
    {"short length", 0, edit_length_short, "malformed: configuration ("},
    {"10^12 moments", 1, edit_moments_huge,
     "holds 1000000000000 moments per array but the model has 44 parameters"},
    {"4 streams", 1, edit_streams, "has 4 generator streams (this build uses 3)"},
    {"2^60-byte rng", 1, edit_rng_huge,
     "state of generator stream 0 has length 1152921504606846976"},
    {"NaN weight", 0, edit_nan_weight, "tensor 'enc.Wx' holds NaN at index 17"},
    {"infinite weight", 0, edit_inf_weight, "tensor 'dec.Wx' holds +inf at index 3"},
    {"NaN moment", 1, edit_nan_moment, "Adam's second moment v holds NaN at index 5"},
};

START_TEST(test_crafted)
{
    const craft *c = &crafts[_i];
    scratch s;
    scratch_open(&s);
    model *m = fake_model(8);
    ckpt_train_state ts;
    gsl_rng *streams[3];
    if (c->with_state)
        fake_train_state(&ts, m, streams);
    save_ok(s.path, m, c->with_state ? &ts : NULL);
    size_t len;
    unsigned char *b = read_all(s.path, &len);
    c->edit(&b, &len);
    write_all(s.path, b, len);
    load_fails_as(c->what, s.path, c->expect);
    free(b);
    if (c->with_state) {
        for (int k = 0; k < 3; k++)
            gsl_rng_free(streams[k]);
        ckpt_train_state_free(&ts);
    }
    fake_free(m);
    scratch_close(&s);
}
END_TEST

/* ckpt_load asks the real registry, which has no model called "fake". */
START_TEST(test_registry_lookup)
{
    scratch s;
    scratch_open(&s);
    model *m = fake_model(9);
    save_ok(s.path, m, NULL);
    char err[512] = "";
    ck_assert_ptr_null(ckpt_load(s.path, NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "model 'fake' is not in this build"), "%s", err);
    fake_free(m);
    scratch_close(&s);
}
END_TEST

/* ---- paths ------------------------------------------------------------------------ */

START_TEST(test_missing_file)
{
    load_fails("/tmp/attnlab-no-such-dir/none.ckpt",
               "cannot open (No such file or directory)");
}
END_TEST

START_TEST(test_not_a_file)
{
    scratch s;
    scratch_open(&s);
    load_fails(s.dir, "is a directory, not a checkpoint file");
    /* A FIFO would block a plain open; it must be refused at once. */
    char fifo[160];
    snprintf(fifo, sizeof fifo, "%s/fifo", s.dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    load_fails(fifo, "is not a regular file");

    model *m = fake_model(10);
    char err[512] = "";
    ck_assert_int_eq(ckpt_save(s.dir, m, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "is a directory"), "%s", err);
    ck_assert_uint_eq(count_entries(s.dir), 1); /* only the FIFO */
    fake_free(m);
    scratch_close(&s);
}
END_TEST

START_TEST(test_unwritable)
{
    scratch s;
    scratch_open(&s);
    model *m = fake_model(11);
    char err[512] = "";
    /* A path under a regular file fails with ENOTDIR, even for root. */
    char file[160], under[200];
    snprintf(file, sizeof file, "%s/plain", s.dir);
    write_all(file, "x", 1);
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
    fake_free(m);
    scratch_close(&s);
}
END_TEST

/* A save that fails halfway (the file-size limit stops the write, as a full disk would)
 * leaves the earlier checkpoint at the path exactly as it was, and no temporary file. */
START_TEST(test_failed_save_keeps_old)
{
    scratch s;
    scratch_open(&s);
    model *old = fake_model(12), *next = fake_model(13);
    save_ok(s.path, old, NULL);
    size_t len;
    unsigned char *before = read_all(s.path, &len);

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
    fake_train_state(&ts, next, streams);
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
    unsigned char *after = read_all(s.path, &len2);
    ck_assert_uint_eq(len2, len);
    ck_assert(memcmp(before, after, len) == 0);
    ck_assert_uint_eq(count_entries(s.dir), 1);
    model *b = ckpt_load_with(s.path, fake_lookup, NULL, err, sizeof err);
    ck_assert_msg(b != NULL, "load failed: %s", err);
    assert_same_params(old, b);

    for (int k = 0; k < 3; k++)
        gsl_rng_free(streams[k]);
    ckpt_train_state_free(&ts);
    free(before);
    free(after);
    fake_free(b);
    fake_free(old);
    fake_free(next);
    scratch_close(&s);
}
END_TEST

/* A save refuses what the loader would refuse: a weight or a moment that is not finite,
 * named with its index; the file at the path is left as it was. */
START_TEST(test_nonfinite_not_saved)
{
    scratch s;
    scratch_open(&s);
    model *old = fake_model(14), *next = fake_model(15);
    save_ok(s.path, old, NULL);
    size_t len;
    unsigned char *before = read_all(s.path, &len);
    char err[512] = "";
    next->params.data[20 + 2] = NAN; /* index 2 of enc.b */
    ck_assert_int_eq(ckpt_save(s.path, next, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "tensor 'enc.b' holds NaN at index 2: not saved"), "%s", err);
    next->params.data[20 + 2] = 0.5;
    ckpt_train_state ts;
    gsl_rng *streams[3];
    fake_train_state(&ts, next, streams);
    ts.m[7] = -INFINITY;
    ck_assert_int_eq(ckpt_save(s.path, next, &ts, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "Adam's first moment m holds -inf at index 7: not saved"), "%s",
                  err);
    size_t len2;
    unsigned char *after = read_all(s.path, &len2);
    ck_assert(len2 == len && memcmp(before, after, len) == 0);
    ck_assert_uint_eq(count_entries(s.dir), 1);
    for (int k = 0; k < 3; k++)
        gsl_rng_free(streams[k]);
    ckpt_train_state_free(&ts);
    free(before);
    free(after);
    fake_free(old);
    fake_free(next);
    scratch_close(&s);
}
END_TEST

/* Messages fit any buffer: a short one is cut, not overrun; none at all is allowed. */
START_TEST(test_small_error_buffer)
{
    char err[12];
    memset(err, 'x', sizeof err);
    ck_assert_ptr_null(ckpt_load_with("/tmp/attnlab-no-such-dir/none.ckpt", fake_lookup,
                                      NULL, err, sizeof err));
    ck_assert_uint_eq(strlen(err), sizeof err - 1);
    ck_assert_ptr_null(ckpt_load_with("/tmp/attnlab-no-such-dir/none.ckpt", fake_lookup,
                                      NULL, NULL, 0));
    ck_assert_int_eq(ckpt_save("", NULL, NULL, NULL, 0), -1);
}
END_TEST

Suite *make_checkpoint_suite(void)
{
    Suite *s = suite_create("checkpoint");
    TCase *tc = tcase_create("crc32");
    tcase_add_test(tc, test_crc32_check_values);
    tcase_add_test(tc, test_crc32_table_matches_bitwise);
    suite_add_tcase(s, tc);

    tc = tcase_create("round trip");
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_round_trip_train_state);
    tcase_add_test(tc, test_bytes_on_disk);
    tcase_add_test(tc, test_save_replaces);
    tcase_add_loop_test(tc, test_later_switch_reads_as_old, 0,
                        (int)(sizeof later / sizeof later[0]));
    suite_add_tcase(s, tc);

    tc = tcase_create("rejections");
    tcase_add_loop_test(tc, test_crafted, 0, (int)(sizeof crafts / sizeof crafts[0]));
    tcase_add_test(tc, test_registry_lookup);
    tcase_add_test(tc, test_missing_file);
    tcase_add_test(tc, test_not_a_file);
    tcase_add_test(tc, test_unwritable);
    tcase_add_test(tc, test_failed_save_keeps_old);
    tcase_add_test(tc, test_nonfinite_not_saved);
    tcase_add_test(tc, test_small_error_buffer);
    suite_add_tcase(s, tc);

    /* Thousands of loads each: tagged so `make check-fast` can skip them. */
    tc = tcase_create("every byte");
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_truncated_everywhere);
    tcase_add_test(tc, test_flip_every_byte);
    suite_add_tcase(s, tc);
    return s;
}
