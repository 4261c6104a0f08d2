/* testckpt.c — the fake model, scratch directories, whole files and the independent
 * layout reader the checkpoint tests share (see testckpt.h). */
#include "testckpt.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/core/crc32.h"
#include "testutil.h"

/* ---- the fake model --------------------------------------------------------------- */

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
    m->ops = &tk_fake_ops;
    m->cfg = *c;
    return m;
}

void tk_fake_free(model *m)
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

const model_ops tk_fake_ops = {
    .name = "fake",
    .about = "parameters only, for the checkpoint tests",
    .defaults = fake_defaults,
    .check = fake_check,
    .alloc = fake_alloc,
    .free = tk_fake_free,
    .n_params = fake_n_params,
};

const model_ops *tk_fake_lookup(const char *name)
{
    return strcmp(name, "fake") == 0 ? &tk_fake_ops : NULL;
}

/* A fake model of the default sizes with non-round parameters drawn from seed. */
model *tk_fake_model(unsigned long seed)
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
void tk_fake_train_state(ckpt_train_state *ts, const model *m, gsl_rng *streams[3])
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

void tk_scratch_open(tk_scratch *s)
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

void tk_scratch_close(tk_scratch *s) { remove_tree(s->dir); }

/* Number of entries in dir besides . and .. (to see that no temporary file is left). */
size_t tk_count_entries(const char *dir)
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

unsigned char *tk_read_all(const char *path, size_t *len)
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

void tk_write_all(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

void tk_save_ok(const char *path, const model *m, const ckpt_train_state *ts)
{
    char err[512] = "";
    ck_assert_msg(ckpt_save(path, m, ts, err, sizeof err) == 0, "save failed: %s", err);
}

/* Loads path, which must be rejected with a message containing expect. The message must
 * be one line naming the file. what names the case in a failure. */
void tk_load_fails_as(const char *what, const char *path, const char *expect)
{
    char err[512] = "";
    ckpt_train_state ts;
    model *m = ckpt_load_with(path, tk_fake_lookup, &ts, err, sizeof err);
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

void tk_load_fails(const char *path, const char *expect)
{
    tk_load_fails_as(path, path, expect);
}

/* ---- the layout, read independently of checkpoint_format.c ------------------------ */

uint64_t tk_rd64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void tk_wr64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

void tk_wr32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

tk_layout tk_walk(const unsigned char *b, size_t len)
{
    tk_layout L = {0};
    size_t p = 28, P = 0;
    L.name_at = p;
    p += 8 + tk_rd64(b + p);
    L.cfg_at = p;
    L.cfg_len = tk_rd64(b + p);
    p += 8 + L.cfg_len;
    L.count_at = p;
    ck_assert_uint_eq(tk_rd64(b + p), FAKE_TENSORS);
    p += 8;
    for (size_t k = 0; k < FAKE_TENSORS; k++) {
        L.entry_at[k] = p;
        p += 8 + tk_rd64(b + p);
        P += tk_rd64(b + p) * tk_rd64(b + p + 8);
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
            p += 8 + tk_rd64(b + p);
    }
    L.crc_at = p;
    ck_assert_uint_eq(p + 4, len);
    return L;
}

/* The first occurrence of needle (k bytes) in hay (n bytes), or NULL. */
unsigned char *tk_find(unsigned char *hay, size_t n, const char *needle, size_t k)
{
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(hay + i, needle, k) == 0)
            return hay + i;
    return NULL;
}

/* Makes an edited file consistent again: the recorded length, the header CRC and the
 * final CRC, so that only the edited content can be what a loader objects to. */
void tk_reseal(unsigned char *b, size_t len)
{
    tk_wr64(b + 16, len);
    tk_wr32(b + 24, crc32_update(0, b, 24));
    tk_wr32(b + len - 4, crc32_update(0, b, len - 4));
}

/* Replaces the first occurrence of from in the configuration text by to (lengths may
 * differ), updates the configuration length, and reseals. */
void tk_edit_config(unsigned char **b, size_t *len, const char *from, const char *to)
{
    tk_layout L = tk_walk(*b, *len);
    size_t text = L.cfg_at + 8, nf = strlen(from), nt = strlen(to);
    unsigned char *hit = tk_find(*b + text, L.cfg_len, from, nf);
    ck_assert_msg(hit != NULL, "'%s' not in the configuration", from);
    size_t at = (size_t)(hit - *b), new_len = *len - nf + nt;
    unsigned char *nb = malloc(new_len);
    ck_assert_ptr_nonnull(nb);
    memcpy(nb, *b, at);
    memcpy(nb + at, to, nt);
    memcpy(nb + at + nt, *b + at + nf, *len - at - nf);
    tk_wr64(nb + L.cfg_at, L.cfg_len - nf + nt);
    free(*b);
    *b = nb;
    *len = new_len;
    tk_reseal(*b, *len);
}

/* ---- comparisons ------------------------------------------------------------------ */

void tk_assert_same_config(const config *a, const config *b)
{
    char va[128], vb[128];
    for (size_t k = 0; k < config_n_fields; k++) {
        config_format(a, &config_fields[k], va, sizeof va);
        config_format(b, &config_fields[k], vb, sizeof vb);
        ck_assert_msg(strcmp(va, vb) == 0, "%s: %s became %s", config_fields[k].name, va,
                      vb);
    }
}

void tk_assert_same_params(const model *a, const model *b)
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

void tk_train_state_free(ckpt_train_state *ts, gsl_rng *streams[3])
{
    for (int k = 0; k < CKPT_RNG_STREAMS; k++)
        gsl_rng_free(streams[k]);
    ckpt_train_state_free(ts);
}
