/* test_checkpoint_format.c — the bytes of a checkpoint, and what a damaged or crafted
 * file makes the loader say (suite: checkpoint_format).
 *
 * Design. Each test saves a good file of testckpt's fake model, reads it back whole and
 * finds its fields with tk_walk, testckpt's own reading of docs/checkpoint-format.md:
 * the documented bytes are checked there, every prefix and every flipped byte must be
 * refused, and a crafted file (an edit resealed with tk_reseal, so that the header CRC,
 * the recorded length and the final CRC agree again) must be refused by the one check it
 * targets, with one line starting "checkpoint PATH: ".
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/core/checkpoint.h"
#include "../common/core/model.h"
#include "testckpt.h"
#include "testutil.h"

/* ---- the documented bytes --------------------------------------------------------- */

/* The documented bytes: magic, version, little-endian doubles, readable configuration. */
START_TEST(test_bytes_on_disk)
{
    tk_scratch s;
    tk_scratch_open(&s);
    model *m = tk_fake_model(3);
    m->params.data[0] = 1.0;  /* 0x3FF0000000000000 */
    m->params.data[1] = -2.5; /* 0xC004000000000000 */
    tk_save_ok(s.path, m, NULL);
    size_t len;
    unsigned char *b = tk_read_all(s.path, &len);
    tk_layout L = tk_walk(b, len);
    ck_assert(memcmp(b, "ATTNCKPT", 8) == 0);
    const unsigned char version[4] = {1, 0, 0, 0}, flags[4] = {0, 0, 0, 0};
    ck_assert(memcmp(b + 8, version, 4) == 0);
    ck_assert(memcmp(b + 12, flags, 4) == 0);
    ck_assert_uint_eq(tk_rd64(b + 16), len);
    const unsigned char one[8] = {0, 0, 0, 0, 0, 0, 0xF0, 0x3F};
    const unsigned char minus_2_5[8] = {0, 0, 0, 0, 0, 0, 0x04, 0xC0};
    ck_assert(memcmp(b + L.data_at, one, 8) == 0);
    ck_assert(memcmp(b + L.data_at + 8, minus_2_5, 8) == 0);
    ck_assert(memcmp(b + L.name_at + 8, "fake", 4) == 0);
    ck_assert_ptr_nonnull(tk_find(b + L.cfg_at + 8, L.cfg_len, "\nhidden\t4\n", 10));
    ck_assert_ptr_nonnull(tk_find(b + L.cfg_at + 8, L.cfg_len, "\nmodel\tfake\n", 12));
    free(b);
    tk_fake_free(m);
    tk_scratch_close(&s);
}
END_TEST
/* ---- damaged files ---------------------------------------------------------------- */

/* Prefixes of a good file (every length up to the generator states, a sample of the
 * rest) are refused as truncated, and a cut inside a part names that part. */
START_TEST(test_truncated_everywhere)
{
    tk_scratch s;
    tk_scratch_open(&s);
    model *m = tk_fake_model(6);
    ckpt_train_state ts;
    gsl_rng *streams[3];
    tk_fake_train_state(&ts, m, streams);
    tk_save_ok(s.path, m, &ts);
    size_t len;
    unsigned char *b = tk_read_all(s.path, &len);
    tk_layout L = tk_walk(b, len);
    char cut_path[160];
    snprintf(cut_path, sizeof cut_path, "%s/cut.ckpt", s.dir);
    size_t dec_at = L.data_at + 8 * (FAKE_H * FAKE_E + FAKE_H); /* values of dec.Wx */
    for (size_t cut = 0; cut < len; cut++) {
        /* Every byte up to the generator states, then a sample of those ~15 kB. */
        if (cut > L.rng_at + 32 && cut + 8 < len && cut % 97 != 0)
            continue;
        tk_write_all(cut_path, b, cut);
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
        tk_load_fails(cut_path, "truncated (expected");
        tk_load_fails(cut_path, part);
    }
    /* The exact line for one cut: 3 of the 20 values of dec.Wx are present. */
    tk_write_all(cut_path, b, dec_at + 3 * 8 + 5);
    char expect[256];
    snprintf(expect, sizeof expect, "checkpoint %s: truncated (expected 160 bytes of "
             "tensor 'dec.Wx' at offset %zu, file ends at %zu)", cut_path, dec_at,
             dec_at + 29);
    char err[512];
    ck_assert_ptr_null(ckpt_load_with(cut_path, tk_fake_lookup, NULL, err, sizeof err));
    ck_assert_str_eq(err, expect);
    for (int k = 0; k < 3; k++)
        gsl_rng_free(streams[k]);
    ckpt_train_state_free(&ts);
    free(b);
    tk_fake_free(m);
    tk_scratch_close(&s);
}
END_TEST

/* One flipped byte anywhere is caught: in the magic as a foreign file, in the version as
 * an unsupported version, anywhere else by a CRC. */
START_TEST(test_flip_every_byte)
{
    tk_scratch s;
    tk_scratch_open(&s);
    model *m = tk_fake_model(7);
    for (int with_state = 0; with_state < 2; with_state++) {
        ckpt_train_state ts;
        gsl_rng *streams[3];
        if (with_state)
            tk_fake_train_state(&ts, m, streams);
        tk_save_ok(s.path, m, with_state ? &ts : NULL);
        size_t len;
        unsigned char *b = tk_read_all(s.path, &len);
        char bad[160];
        snprintf(bad, sizeof bad, "%s/flipped.ckpt", s.dir);
        for (size_t i = 0; i < len; i++) {
            if (with_state && i > 200 && i % 37 != 0) /* sample the long state */
                continue;
            unsigned char keep = b[i];
            b[i] ^= (unsigned char)(1u << (i % 8));
            tk_write_all(bad, b, len);
            b[i] = keep;
            if (i < 8)
                tk_load_fails(bad, "not an attnlab checkpoint (bad magic)");
            else if (i < 12)
                tk_load_fails(bad, "is not supported (this build reads version 1)");
            else if (i < 28)
                tk_load_fails(bad, "CRC mismatch in the header");
            else
                tk_load_fails(bad, "the file is corrupt");
        }
        /* The line for a flipped value byte shows both checksums. */
        b[len / 2] ^= 0x40;
        tk_write_all(bad, b, len);
        tk_load_fails(bad, "CRC mismatch (stored 0x");
        free(b);
        if (with_state) {
            for (int k = 0; k < 3; k++)
                gsl_rng_free(streams[k]);
            ckpt_train_state_free(&ts);
        }
    }
    tk_fake_free(m);
    tk_scratch_close(&s);
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
    tk_wr32(*b + 8, 7);
    tk_reseal(*b, *len);
}

static void edit_flags(unsigned char **b, size_t *len)
{
    tk_wr32(*b + 12, (*b)[12] | 0x2);
    tk_reseal(*b, *len);
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
    tk_edit_config(b, len, "\nhidden\t4\n", "\nhidden\t6\n");
}

static void edit_check(unsigned char **b, size_t *len)
{
    tk_edit_config(b, len, "\nhidden\t4\n", "\nhidden\t99\n");
}

static void edit_key(unsigned char **b, size_t *len)
{
    tk_edit_config(b, len, "\nhidden\t4\n", "\nhidden\t4\nbogus\t1\n");
}

static void edit_cfg_model(unsigned char **b, size_t *len)
{
    tk_edit_config(b, len, "\nmodel\tfake\n", "\nmodel\tfaKe\n");
}

/* Overwrites the model name in the header ("fake" has 4 bytes). */
static void edit_name(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    memcpy(*b + L.name_at + 8, "fakx", 4);
    tk_reseal(*b, *len);
}

/* "task\tcopy" becomes "task\tc\0py": same length, so only the byte is new. */
static void edit_cfg_nul(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    unsigned char *hit = tk_find(*b + L.cfg_at + 8, L.cfg_len, "\ntask\tcopy\n", 11);
    ck_assert_ptr_nonnull(hit);
    hit[7] = '\0';
    tk_reseal(*b, *len);
}

static void edit_name_control(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    (*b)[L.name_at + 10] = 0x1B; /* ESC */
    tk_reseal(*b, *len);
}

static void edit_name_huge(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    tk_wr64(*b + L.name_at, 1ull << 60);
    tk_reseal(*b, *len);
}

static void edit_cfg_huge(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    tk_wr64(*b + L.cfg_at, 1ull << 60);
    tk_reseal(*b, *len);
}

static void edit_count_huge(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    tk_wr64(*b + L.count_at, 1ull << 40);
    tk_reseal(*b, *len);
}

static void edit_count_small(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    tk_wr64(*b + L.count_at, 2);
    tk_reseal(*b, *len);
}

static void edit_tensor_name_huge(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    tk_wr64(*b + L.entry_at[0], 1ull << 60);
    tk_reseal(*b, *len);
}

/* Tensor 0 is "enc.Wx" (6 bytes): its rows follow at entry + 8 + 6. */
static void edit_rows_huge(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    tk_wr64(*b + L.entry_at[0] + 14, 1000000000000ull); /* 10^12 rows of 5: 4e13 bytes */
    tk_reseal(*b, *len);
}

static void edit_rows_overflow(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    tk_wr64(*b + L.entry_at[0] + 14, 1ull << 62); /* rows·cols·8 overflows 64 bits */
    tk_wr64(*b + L.entry_at[0] + 22, 1ull << 62);
    tk_reseal(*b, *len);
}

static void edit_rows_zero(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    tk_wr64(*b + L.entry_at[0] + 14, 0);
    tk_reseal(*b, *len);
}

/* Swaps the shape of enc.Wx to (5, 4): same size, so only the shape check can see it. */
static void edit_transposed(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    tk_wr64(*b + L.entry_at[0] + 14, FAKE_E);
    tk_wr64(*b + L.entry_at[0] + 22, FAKE_H);
    tk_reseal(*b, *len);
}

static void edit_tensor_name(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    (*b)[L.entry_at[0] + 8 + 5] = 'y'; /* enc.Wx -> enc.Wy */
    tk_reseal(*b, *len);
}

static void edit_moments_huge(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    tk_wr64(*b + L.train_at + 8, 1000000000000ull);
    tk_reseal(*b, *len);
}

static void edit_streams(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    tk_wr64(*b + L.rng_at, 4);
    tk_reseal(*b, *len);
}

static void edit_rng_huge(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    tk_wr64(*b + L.rng_at + 8, 1ull << 60);
    tk_reseal(*b, *len);
}

/* A value that is not finite where a checkpoint holds numbers: a NaN (with a payload) at
 * index 17 of enc.Wx (4 x 5), +inf at index 3 of dec.Wx (after enc.Wx and enc.b: 20 + 4
 * values), a NaN at index 5 of Adam's second moment (after the step, the count and the
 * 44 values of m). */
static void edit_nan_weight(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    tk_wr64(*b + L.data_at + 8 * 17, 0x7FF8000000ABCDEFull);
    tk_reseal(*b, *len);
}

static void edit_inf_weight(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    tk_wr64(*b + L.data_at + 8 * (20 + 4 + 3), 0x7FF0000000000000ull);
    tk_reseal(*b, *len);
}

static void edit_nan_moment(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    tk_wr64(*b + L.train_at + 16 + 8 * (44 + 5), 0xFFF8000000000000ull);
    tk_reseal(*b, *len);
}

/* Cuts the file inside the configuration and reseals it there: header, length and CRC
 * agree, but the configuration claims more bytes than the recorded length leaves. */
static void edit_length_short(unsigned char **b, size_t *len)
{
    tk_layout L = tk_walk(*b, *len);
    *len = L.cfg_at + 8 + 10 + 4; /* 10 bytes of configuration, then the CRC */
    tk_reseal(*b, *len);
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
    tk_scratch s;
    tk_scratch_open(&s);
    model *m = tk_fake_model(8);
    ckpt_train_state ts;
    gsl_rng *streams[3];
    if (c->with_state)
        tk_fake_train_state(&ts, m, streams);
    tk_save_ok(s.path, m, c->with_state ? &ts : NULL);
    size_t len;
    unsigned char *b = tk_read_all(s.path, &len);
    c->edit(&b, &len);
    tk_write_all(s.path, b, len);
    tk_load_fails_as(c->what, s.path, c->expect);
    free(b);
    if (c->with_state) {
        for (int k = 0; k < 3; k++)
            gsl_rng_free(streams[k]);
        ckpt_train_state_free(&ts);
    }
    tk_fake_free(m);
    tk_scratch_close(&s);
}

Suite *make_checkpoint_format_suite(void)
{
    Suite *s = suite_create("checkpoint_format");
    TCase *tc = tcase_create("bytes");
    tcase_add_test(tc, test_bytes_on_disk);
    suite_add_tcase(s, tc);

    tc = tcase_create("rejections");
    tcase_add_loop_test(tc, test_crafted, 0, (int)(sizeof crafts / sizeof crafts[0]));
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
