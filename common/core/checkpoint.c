/* checkpoint.c — saving a model through an atomic file, and loading one back into a
 * model built from the stored configuration (see checkpoint.h; the bytes are in
 * checkpoint_format.c and docs/checkpoint-format.md).
 *
 * Design. A save refuses first what the loader would refuse (check_savable), runs the
 * encoder twice — counting only, to learn the total length the header records, then for
 * real into an afile — and lets afile_commit decide: the temporary file is renamed over
 * the path only when every byte was written, flushed and synced (afile.h holds the one
 * policy every file the toolkit writes follows).
 *
 * A load checks the path (a regular file), then the header, the file's length against
 * the recorded one, the whole-file CRC, and only then the contents: the model name is
 * looked up, the configuration builds the model (build_model), the stored tensor table
 * must be the model's own (match_table), and the values go straight into its parameter
 * block, each checked to be finite as it is read (ckpt_get_doubles), so a NaN weight is
 * named with its tensor and index here instead of surfacing later as a NaN loss. A file
 * cut short is walked dry, building nothing, to name the part where it
 * ends.
 */
#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afile.h"
#include "checkpoint_format.h"
#include "infile.h"

/* ---- saving -------------------------------------------------------------------------- */

/* The configuration as config_write_tsv prints it, with the model field set to the
 * registry name, so the file always names the model it holds. Returns the text (free
 * it) and its length, or NULL when memory runs out. */
static char *config_text(const model *m, size_t *len)
{
    config c = m->cfg;
    snprintf(c.model, sizeof c.model, "%s", m->ops->name);
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f)
        return NULL;
    int rc = config_write_tsv(&c, f);
    if (fclose(f) != 0 || rc != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Refuses what the loader would refuse, so that no save produces an unreadable file. */
static int check_savable(const char *path, const model *m, const ckpt_train_state *ts,
                         char *err, size_t n)
{
    if (!m || !m->ops || !m->ops->name || !m->params.data || m->params.n_tensors == 0)
        return ckpt_fail(err, n, path, "no model to save (empty parameter block)");
    size_t len = strlen(m->ops->name);
    if (len == 0 || len >= CONFIG_STR_MAX || !ckpt_printable(m->ops->name, len))
        return ckpt_fail(err, n, path,
                         "model name '%s' cannot be stored (accepted: 1 to %d "
                         "printable ASCII characters)",
                         m->ops->name, CONFIG_STR_MAX - 1);
    if (m->params.n_tensors > CKPT_TENSORS_MAX)
        return ckpt_fail(err, n, path,
                         "model has %zu tensors (the format holds at most %u)",
                         m->params.n_tensors, CKPT_TENSORS_MAX);
    for (size_t k = 0; k < m->params.n_tensors; k++) {
        const char *t = m->params.spec[k].name;
        len = strnlen(t, ARENA_NAME_MAX);
        if (len == 0 || len >= ARENA_NAME_MAX || !ckpt_printable(t, len))
            return ckpt_fail(err, n, path, "tensor %zu has a name the format cannot store "
                             "(accepted: 1 to %d printable ASCII characters)", k,
                             ARENA_NAME_MAX - 1);
    }
    char why[160];
    for (size_t k = 0; k < m->params.n_tensors; k++) {
        char what[ARENA_NAME_MAX + 16];
        snprintf(what, sizeof what, "tensor '%s'", m->params.spec[k].name);
        if (ckpt_nonfinite(m->params.data + m->params.offset[k], arena_numel(&m->params, k),
                           what, why, sizeof why))
            return ckpt_fail(err, n, path, "%s: not saved (a checkpoint holds finite "
                             "numbers only)", why);
    }
    if (!ts)
        return 0;
    if (ts->n != m->params.size)
        return ckpt_fail(err, n, path,
                         "training state has %zu moments per array but the model "
                         "has %zu parameters",
                         ts->n, m->params.size);
    if (!ts->m || !ts->v)
        return ckpt_fail(err, n, path, "training state lacks Adam's moment arrays");
    if (ckpt_nonfinite(ts->m, ts->n, "Adam's first moment m", why, sizeof why) ||
        ckpt_nonfinite(ts->v, ts->n, "Adam's second moment v", why, sizeof why))
        return ckpt_fail(err, n, path, "%s: not saved (a checkpoint holds finite numbers "
                         "only)", why);
    for (int k = 0; k < CKPT_RNG_STREAMS; k++) {
        if (!ts->rng[k])
            return ckpt_fail(err, n, path,
                             "training state: generator stream %d has no state", k);
        if (ts->rng_size[k] == 0 || ts->rng_size[k] > CKPT_RNG_STATE_MAX)
            return ckpt_fail(err, n, path,
                             "training state: generator stream %d has a state of "
                             "%zu bytes (accepted: 1 to %u)",
                             k, ts->rng_size[k], CKPT_RNG_STATE_MAX);
    }
    return 0;
}

int ckpt_save(const char *path, const model *m, const ckpt_train_state *ts, char *err,
              size_t n)
{
    afile af;
    if (ckpt_stage(&af, path, m, ts, err, n) != 0)
        return -1;
    return afile_publish(&af, err, n);
}

int ckpt_stage(afile *af, const char *path, const model *m, const ckpt_train_state *ts,
               char *err, size_t n)
{
    if (!path || !path[0])
        return ckpt_fail(err, n, path, "no file name given");
    if (check_savable(path, m, ts, err, n) != 0)
        return -1;
    size_t cfg_len = 0;
    char *cfg = config_text(m, &cfg_len);
    if (!cfg)
        return ckpt_fail(err, n, path, "out of memory formatting the configuration");
    if (cfg_len == 0 || cfg_len > CKPT_CONFIG_TEXT_MAX) {
        free(cfg);
        return ckpt_fail(err, n, path, "configuration text of %zu bytes cannot be stored "
                         "(accepted: 1 to %u)", cfg_len, CKPT_CONFIG_TEXT_MAX);
    }

    /* pass 1 only counts: the header records the length pass 2 will produce */
    ckpt_writer count = {0};
    ckpt_encode(&count, m->ops->name, cfg, cfg_len, &m->params, ts, 0);
    if (afile_open(af, path, err, n) != 0) {
        free(cfg);
        return -1;
    }
    ckpt_writer w = {.f = af->f};
    ckpt_encode(&w, m->ops->name, cfg, cfg_len, &m->params, ts, count.pos);
    free(cfg);
    /* a failed write the cursor saw, or a length that disagrees with the header, keeps
     * the temporary file from replacing anything */
    af->err_no = w.err_no ? w.err_no : w.pos != count.pos ? EIO : 0;
    return afile_finish(af, err, n);
}

/* ---- loading ------------------------------------------------------------------------- */

/* Builds the model the stored configuration describes: generic defaults, the model's
 * own defaults (so a key that an older file lacks gets the value the model would use),
 * then the stored text, then every check a command line would get. */
static int build_model(ckpt_reader *r, const model_ops *ops, const char *name,
                       const char *text, uint64_t stored_params, model **out)
{
    config c;
    char msg[256];
    config_defaults(&c);
    if (ops->defaults)
        ops->defaults(&c);
    if (config_read_text(&c, text, msg, sizeof msg) != 0)
        return ckpt_fail(r->err, r->n, r->path, "invalid configuration: %s", msg);
    if (strcmp(c.model, name) != 0)
        return ckpt_fail(r->err, r->n, r->path, "the header names model '%s' but the "
                         "configuration says '%s'", name, c.model);
    if (config_check(&c, msg, sizeof msg) != 0 ||
        (ops->check && ops->check(&c, msg, sizeof msg) != 0))
        return ckpt_fail(r->err, r->n, r->path, "invalid configuration: %s", msg);
    /* the file decided the configuration: compare its size with the tensors the file
     * really holds before allocating anything of that size */
    if (ops->n_params && ops->n_params(&c) != stored_params)
        return ckpt_fail(r->err, r->n, r->path,
                         "the configuration implies %zu parameters but "
                         "the file holds %" PRIu64,
                         ops->n_params(&c), stored_params);
    *out = ops->alloc(&c);
    if (!*out)
        return ckpt_fail(r->err, r->n, r->path, "out of memory building model '%s'", name);
    return 0;
}

/* The stored table must be the model's own, entry by entry: same names, same order, same
 * shapes. Otherwise the values would land in the wrong tensors. */
static int match_table(ckpt_reader *r, const arena *a, const arena_spec *table,
                       uint64_t count)
{
    if (count != a->n_tensors)
        return ckpt_fail(r->err, r->n, r->path, "holds %" PRIu64 " tensors but the "
                         "configuration implies %zu", count, a->n_tensors);
    for (size_t k = 0; k < a->n_tensors; k++) {
        const arena_spec *t = &table[k], *want = &a->spec[k];
        if (strcmp(t->name, want->name) != 0)
            return ckpt_fail(r->err, r->n, r->path,
                             "tensor %zu is '%s' but the configuration "
                             "implies '%s' there",
                             k, t->name, want->name);
        if (t->rows != want->rows || t->cols != want->cols)
            return ckpt_fail(r->err, r->n, r->path,
                             "tensor '%s' has shape (%zu, %zu) but the "
                             "configuration implies (%zu, %zu)",
                             t->name, t->rows, t->cols, want->rows, want->cols);
    }
    return 0;
}

/* Reads everything between the header and the final CRC, in file order. With dry set
 * (a truncated file) it only walks the structure: it looks nothing up, allocates nothing
 * but the tensor table, and stops at the first part the file does not hold. Otherwise it
 * builds the model into *out and fills ts (when not NULL). */
static int read_body(ckpt_reader *r, uint32_t flags,
                     const model_ops *(*lookup)(const char *), int dry, model **out,
                     ckpt_train_state *ts)
{
    char name[CONFIG_STR_MAX];
    const model_ops *ops = NULL;
    model *m = NULL;
    char *text = NULL;
    arena_spec *table = NULL;
    uint64_t len, count = 0, P = 0;
    int rc = -1;

    if (ckpt_get_name(r, name, sizeof name, "model name") != 0)
        goto done;
    if (!dry && !(ops = lookup(name))) {
        ckpt_fail(r->err, r->n, r->path, "model '%s' is not in this build", name);
        goto done;
    }

    if (ckpt_get_u64(r, &len, "configuration length") != 0)
        goto done;
    if (len == 0 || len > CKPT_CONFIG_TEXT_MAX) {
        ckpt_fail(r->err, r->n, r->path,
                  "configuration has length %" PRIu64 " (accepted: 1 "
                  "to %u)",
                  len, CKPT_CONFIG_TEXT_MAX);
        goto done;
    }
    if (dry) {
        if (ckpt_get(r, NULL, len, "configuration") != 0)
            goto done;
    } else {
        if (ckpt_need(r, len, "configuration") != 0) /* before the allocation */
            goto done;
        if (!(text = malloc((size_t)len + 1))) {
            ckpt_fail(r->err, r->n, r->path, "out of memory reading the configuration");
            goto done;
        }
        if (ckpt_get(r, text, len, "configuration") != 0)
            goto done;
        text[len] = '\0';
        if (strlen(text) != len) {
            ckpt_fail(r->err, r->n, r->path, "configuration text contains a NUL byte");
            goto done;
        }
    }

    if (ckpt_read_table(r, &table, &count, &P) != 0)
        goto done;
    if (!dry) {
        if (build_model(r, ops, name, text, P, &m) != 0 || !m)
            goto done;
        if (match_table(r, &m->params, table, count) != 0)
            goto done;
    }
    for (size_t k = 0; k < count; k++) {
        char what[96];
        snprintf(what, sizeof what, "tensor '%s'", table[k].name);
        double *dst = dry ? NULL : m->params.data + m->params.offset[k];
        if (ckpt_get_doubles(r, dst, (uint64_t)table[k].rows * table[k].cols, what) != 0)
            goto done;
    }

    if ((flags & CKPT_FLAG_TRAIN_STATE) &&
        ckpt_read_train_state(r, P, dry ? NULL : ts) != 0)
        goto done;
    if (r->pos != r->end) {
        ckpt_fail(r->err, r->n, r->path,
                  "malformed: %" PRIu64 " unexpected bytes after the "
                  "last section",
                  r->end - r->pos);
        goto done;
    }
    rc = 0;

done:
    if (rc != 0 && m)
        ops->free(m);
    else if (out)
        *out = m;
    free(text);
    free(table);
    return rc;
}

model *ckpt_load_with(const char *path, const model_ops *(*lookup)(const char *name),
                      ckpt_train_state *ts, char *err, size_t n)
{
    if (ts)
        memset(ts, 0, sizeof *ts);
    if (!path || !path[0]) {
        ckpt_fail(err, n, path, "no file name given");
        return NULL;
    }
    /* opened without blocking (a FIFO given by mistake is refused, never waited on) and
     * checked to be a regular file, as every file read is (infile.h) */
    struct stat st;
    int fd = infile_open_fd(path, &st, NULL, 0);
    if (fd == -1) {
        ckpt_fail(err, n, path, "cannot open (%s)", strerror(errno));
        return NULL;
    }
    if (fd < 0) {
        if (S_ISDIR(st.st_mode))
            ckpt_fail(err, n, path, "is a directory, not a checkpoint file");
        else
            ckpt_fail(err, n, path, "is not a regular file (%s)", infile_kind(st.st_mode));
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        ckpt_fail(err, n, path, "cannot open (%s)", strerror(errno));
        close(fd);
        return NULL;
    }
    ckpt_reader r = {
        .f = f, .path = path, .size = (uint64_t)st.st_size, .err = err, .n = n};
    uint32_t flags = 0;
    model *m = NULL;
    int rc = ckpt_read_header(&r, &flags);
    if (rc == 0 && r.size < r.end + CKPT_CRC_SIZE) {
        /* Cut short: walk as far as the file goes to say which part is missing. */
        if (read_body(&r, flags, NULL, 1, NULL, NULL) == 0)
            ckpt_truncated(&r, CKPT_CRC_SIZE, "CRC");
        rc = -1;
    } else if (rc == 0 && r.size > r.end + CKPT_CRC_SIZE) {
        rc = ckpt_fail(err, n, path,
                       "is %" PRIu64 " bytes long but its header says %" PRIu64
                       ": unexpected bytes after the end",
                       r.size, r.end + CKPT_CRC_SIZE);
    }
    if (rc == 0)
        rc = ckpt_verify_crc(&r);
    if (rc == 0)
        rc = read_body(&r, flags, lookup ? lookup : model_lookup, 0, &m, ts);
    fclose(f);
    if (rc != 0 && ts)
        ckpt_train_state_free(ts);
    return rc == 0 ? m : NULL;
}

model *ckpt_load(const char *path, ckpt_train_state *ts, char *err, size_t n)
{
    return ckpt_load_with(path, model_lookup, ts, err, n);
}

void ckpt_train_state_free(ckpt_train_state *ts)
{
    if (!ts)
        return;
    free(ts->m);
    free(ts->v);
    for (int k = 0; k < CKPT_RNG_STREAMS; k++)
        free(ts->rng[k]);
    memset(ts, 0, sizeof *ts);
}
