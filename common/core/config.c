/* config.c — the one table that describes every setting (see config.h).
 *
 * Design. config_fields is the only place a setting's name, type, range and help are
 * written; parsing (config_set, config_parse_whole), printing (config_format) and the
 * range checks of a configuration read from a file (config_check_fields) walk it. The
 * defaults of the model sizes are not written here but in each model's defaults(),
 * reached through the registry (model.h). */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "task.h"

#define F(field) offsetof(config, field)
#define BIG 1e9 /* upper bound of counts and sizes: large enough, small enough to allocate */

const config_field config_fields[] = {
    {"model", CFG_STRING, F(model), 0, 0, NULL,
     "model to train (see `attnlab help models`)", 0, 0},
    {"task", CFG_STRING, F(task), 0, 0, NULL,
     "task: copy, reverse, or file:PATH (SOURCE<TAB>TARGET lines)", CONFIG_TASK_MAX, 0},
    {"symbols", CFG_SIZE, F(symbols), 2, 1000, NULL,
     "number of data symbols V (file:PATH: its vocabulary's size)", 0, 0},
    {"data_crc", CFG_ULONG, F(data_crc), 0, 4294967295.0, NULL,
     "file:PATH: the CRC-32 the file must have (set by train from the file)", 0,
     CFG_FILE_TASK_ONLY},
    {"max_len", CFG_SIZE, F(max_len), 1, 4096, NULL,
     "longest sequence the model accepts", 0, 0},
    {"embed", CFG_SIZE, F(embed), 1, 4096, NULL, "embedding width E (recurrent models)", 0, 0},
    {"hidden", CFG_SIZE, F(hidden), 1, 4096, NULL, "recurrent state width H", 0, 0},
    {"attn", CFG_SIZE, F(attn), 1, 4096, NULL, "additive-attention width A", 0, 0},
    {"cell", CFG_STRING, F(cell), 0, 0, "gru,lstm",
     "recurrent cell, where a model offers a choice", 0, 0},
    {"forget_bias", CFG_DOUBLE, F(forget_bias), -100, 100, NULL,
     "initial forget-gate bias of the cells that have one", 0, 0},
    {"feed_context", CFG_BOOL, F(feed_context), 0, 1, NULL,
     "a switch: where a model offers it, the encoder's final state is an input of every "
     "decoder step (off: only its initial state)", 0, CFG_UNLESS_ZERO},
    {"bidirectional", CFG_BOOL, F(bidirectional), 0, 1, NULL,
     "a switch: where a model offers it, the encoder reads the source both ways, "
     "annotations [fwd; bwd] of width 2H (off: forward only)", 0, CFG_UNLESS_ZERO},
    {"d_model", CFG_SIZE, F(d_model), 1, 4096, NULL, "model width D of attention-only layers", 0, 0},
    {"heads", CFG_SIZE, F(heads), 1, 256, NULL, "attention heads NH (divides d_model)", 0, 0},
    {"d_ff", CFG_SIZE, F(d_ff), 1, 16384, NULL, "feed-forward width of those layers", 0, 0},
    {"layers", CFG_SIZE, F(layers), 1, 64, NULL,
     "encoder layers, and as many decoder layers", 0, 0},
    {"pos", CFG_STRING, F(pos), 0, 0, "sinusoidal,learned,none",
     "positions added to the embeddings", 0, 0},
    {"post_ln", CFG_BOOL, F(post_ln), 0, 1, NULL,
     "a switch: layer norm after each residual, the paper's order (off: before it)", 0, 0},
    {"emb_scale", CFG_DOUBLE, F(emb_scale), 0, 1e6, NULL,
     "embeddings are multiplied by this before positions are added", 0, 0},
    {"emb_init", CFG_DOUBLE, F(emb_init), 0, 1e6, NULL, "std. dev. of embedding init", 0, 0},
    {"train_min", CFG_SIZE, F(train_min), 1, 4096, NULL, "shortest training length", 0, 0},
    {"train_max", CFG_SIZE, F(train_max), 1, 4096, NULL, "longest training length", 0, 0},
    {"steps", CFG_SIZE, F(steps), 1, BIG, NULL, "training steps", 0, 0},
    {"batch", CFG_SIZE, F(batch), 1, 65536, NULL, "sequences per step", 0, 0},
    {"lr", CFG_DOUBLE, F(lr), 1e-12, 1e300, NULL, "Adam learning rate", 0, 0},
    {"beta1", CFG_DOUBLE, F(beta1), 0, 0.999999, NULL, "Adam β1", 0, 0},
    {"beta2", CFG_DOUBLE, F(beta2), 0, 0.999999999, NULL, "Adam β2", 0, 0},
    {"eps", CFG_DOUBLE, F(eps), 1e-300, 1, NULL, "Adam ε", 0, 0},
    {"clip", CFG_DOUBLE, F(clip), 0, 1e12, NULL, "global gradient-norm bound (0: off)", 0, 0},
    {"warmup", CFG_SIZE, F(warmup), 0, BIG, NULL, "linear learning-rate warm-up steps", 0, 0},
    {"seed", CFG_ULONG, F(seed), 0, 4294967295.0, NULL, "random seed", 0, 0},
    {"threads", CFG_SIZE, F(threads), 1, 256, NULL, "BLAS threads", 0, 0},
    {"log_every", CFG_SIZE, F(log_every), 1, BIG, NULL,
     "steps between log lines, each with a validation", 0, 0},
    {"val_samples", CFG_SIZE, F(val_samples), 1, 65536, NULL,
     "validation sequences (fresh, at lengths inside the training range)", 0, 0},
    {"patience", CFG_SIZE, F(patience), 0, BIG, NULL,
     "stop after this many validations without improvement (0: run every step)", 0, 0},
    {"min_delta", CFG_DOUBLE, F(min_delta), 0, 1, NULL,
     "validation token accuracy an improvement must add", 0, 0},
    {"val_window", CFG_SIZE, F(val_window), 1, CONFIG_VAL_WINDOW_MAX, NULL,
     "validations the plateau test averages (1: each alone)", 0, 0},
    {"stop_acc", CFG_DOUBLE, F(stop_acc), 0, 1, NULL,
     "stop once the validation token accuracy reaches this (0: never)", 0, 0},
    {"lr_schedule", CFG_STRING, F(lr_schedule), 0, 0, "constant,cosine",
     "learning rate after the warm-up", 0, 0},
    {"lr_floor", CFG_DOUBLE, F(lr_floor), 0, 1, NULL,
     "cosine schedule: the last step's rate, as a fraction of --lr", 0, 0},
    {"decay_steps", CFG_SIZE, F(decay_steps), 0, BIG, NULL,
     "cosine schedule: steps from the warm-up's end to the floor, then the floor "
     "(0: to --steps)", 0, CFG_UNLESS_ZERO},
    {"val_first", CFG_SIZE, F(val_first), 0, BIG, NULL,
     "first validation step, then every 10% more until --log-every apart (0: every "
     "--log-every steps)", 0, CFG_UNLESS_ZERO},
    {"checkpoint_every", CFG_SIZE, F(checkpoint_every), 0, BIG, NULL,
     "steps between resumable checkpoints (0: none before the end)", 0, 0},
};
const size_t config_n_fields = sizeof config_fields / sizeof config_fields[0];

void config_defaults(config *c)
{
    memset(c, 0, sizeof *c);
    /* the sizes of every model, each written once in its own defaults() */
    for (size_t k = 0; model_registry[k]; k++)
        model_registry[k]->defaults(c);
    /* the generic settings and recipe, over whatever a model's defaults() set */
    snprintf(c->model, sizeof c->model, "%s", model_registry[0]->name);
    strcpy(c->task, "copy");
    c->symbols = 10;
    c->max_len = 256;
    c->train_min = 4;
    c->train_max = 32;
    c->steps = 2000;
    c->batch = 32;
    c->lr = 1e-3;
    c->beta1 = 0.9;
    c->beta2 = 0.999;
    c->eps = 1e-8;
    c->clip = 1.0;
    c->warmup = 0;
    c->seed = 1;
    c->threads = 1;
    c->log_every = 100;
    c->val_samples = 256;
    c->patience = 0;
    c->min_delta = 0.001;
    c->stop_acc = 0;
    c->val_window = 1;
    strcpy(c->lr_schedule, "constant");
    c->lr_floor = 0.1;
    c->decay_steps = 0; /* the cosine ends at --steps: the bits of every earlier run */
    c->val_first = 0;   /* validation at multiples of --log-every only */
    c->checkpoint_every = 500;
}

const config_field *config_find(const char *name)
{
    for (size_t k = 0; k < config_n_fields; k++) {
        const char *a = config_fields[k].name, *b = name;
        while (*a && (*a == *b || (*a == '_' && *b == '-'))) {
            a++;
            b++;
        }
        if (*a == '\0' && *b == '\0')
            return &config_fields[k];
    }
    return NULL;
}

void config_flag_name(const config_field *f, char *buf, size_t n)
{
    snprintf(buf, n, "%s", f->name);
    for (char *p = buf; *p; p++)
        if (*p == '_')
            *p = '-';
}

int config_parse_whole(const char *flag, const char *text, unsigned long long lo,
                       unsigned long long hi, const char *accepted, unsigned long long *out,
                       char *err, size_t n)
{
    char range[96];
    if (accepted)
        snprintf(range, sizeof range, "%s", accepted);
    else
        snprintf(range, sizeof range, "an integer in [%llu, %llu]", lo, hi);
    if (*text == '\0') {
        snprintf(err, n, "--%s: empty value (accepted: %s)", flag, range);
        return -1;
    }
    unsigned long long v = 0;
    const char *p = text;
    for (; *p; p++) {
        if (*p < '0' || *p > '9') {
            snprintf(err, n, "--%s: '%s' is not a whole number (accepted: %s)", flag, text,
                     range);
            return -1;
        }
        if (v > hi)
            break; /* already out of range: stop before it can overflow */
        v = v * 10 + (unsigned long long)(*p - '0');
    }
    for (; *p; p++) /* the rest of a number too long: still digits only */
        if (*p < '0' || *p > '9') {
            snprintf(err, n, "--%s: '%s' is not a whole number (accepted: %s)", flag, text,
                     range);
            return -1;
        }
    if (v < lo || v > hi) {
        snprintf(err, n, "--%s: %s is out of range (accepted: %s)", flag, text, range);
        return -1;
    }
    *out = v;
    return 0;
}

/* Is text a real number of the one grammar (config.h): -?D+(.D+)?([eE][+-]?D+)? where
 * D is a decimal digit? strtod alone would also take leading spaces, hexadecimal
 * ("0x1p-3"), "inf" and "nan", which a whole-number setting refuses. */
static int is_decimal(const char *text)
{
    const char *p = text;
    size_t d;
    if (*p == '-')
        p++;
    for (d = 0; *p >= '0' && *p <= '9'; p++)
        d++;
    if (d == 0)
        return 0;
    if (*p == '.') {
        for (p++, d = 0; *p >= '0' && *p <= '9'; p++)
            d++;
        if (d == 0)
            return 0;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        for (d = 0; *p >= '0' && *p <= '9'; p++)
            d++;
        if (d == 0)
            return 0;
    }
    return *p == '\0';
}

/* Writes the accepted range or choices of f into buf, as a message shows it. */
static void describe_range(const config_field *f, char *buf, size_t n)
{
    switch (f->type) {
    case CFG_STRING:
        snprintf(buf, n, "%s", f->choices ? f->choices : "a name");
        break;
    case CFG_BOOL:
        snprintf(buf, n, "0 or 1");
        break;
    case CFG_DOUBLE:
        snprintf(buf, n, "a decimal number in [%g, %g]", f->min, f->max);
        break;
    default:
        snprintf(buf, n, "an integer in [%.0f, %.0f]", f->min, f->max);
        break;
    }
}

/* Is word one of the comma-separated choices? */
static int in_choices(const char *choices, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = choices; *p;) {
        const char *end = strchr(p, ',');
        size_t k = end ? (size_t)(end - p) : strlen(p);
        if (k == len && strncmp(p, word, k) == 0)
            return 1;
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

int config_set(config *c, const config_field *f, const char *text, char *err, size_t n)
{
    char range[128];
    describe_range(f, range, sizeof range);
    char *base = (char *)c + f->offset;
    char flag[CONFIG_STR_MAX];
    config_flag_name(f, flag, sizeof flag);
    if (f->type == CFG_STRING) {
        /* names only: no spaces, tabs, newlines or control characters; a data file's
         * path (task file:PATH) may hold spaces, as any file name may */
        const int path = strcmp(f->name, "task") == 0 && strncmp(text, "file:", 5) == 0;
        int printable = 1;
        for (const char *p = text; *p; p++)
            if ((unsigned char)*p < (path ? 0x20 : 0x21) || *p == 0x7f)
                printable = 0;
        const size_t size = f->size ? f->size : CONFIG_STR_MAX;
        if (text[0] == '\0' || strlen(text) >= size || !printable ||
            (f->choices && !in_choices(f->choices, text))) {
            snprintf(err, n, "--%s: '%s' is not accepted (accepted: %s)", flag, text, range);
            return -1;
        }
        strcpy(base, text);
        return 0;
    }
    if (f->type == CFG_DOUBLE) {
        errno = 0;
        const int decimal = is_decimal(text);
        const double v = decimal ? strtod(text, NULL) : 0;
        if (!decimal || errno == ERANGE || !isfinite(v)) {
            snprintf(err, n, "--%s: '%s' is not a number (accepted: %s)", flag, text, range);
            return -1;
        }
        if (v < f->min || v > f->max) {
            snprintf(err, n, "--%s: %s is out of range (accepted: %s)", flag, text, range);
            return -1;
        }
        *(double *)base = v;
        return 0;
    }
    /* integers (and switches): digits only, then the range */
    unsigned long long v;
    if (config_parse_whole(flag, text, (unsigned long long)f->min, (unsigned long long)f->max,
                           range, &v, err, n) != 0)
        return -1;
    if (f->type == CFG_SIZE)
        *(size_t *)base = (size_t)v;
    else if (f->type == CFG_ULONG)
        *(unsigned long *)base = (unsigned long)v;
    else
        *(int *)base = (int)v;
    return 0;
}

void config_format(const config *c, const config_field *f, char *buf, size_t n)
{
    const char *base = (const char *)c + f->offset;
    switch (f->type) {
    case CFG_STRING:
        snprintf(buf, n, "%s", base);
        break;
    case CFG_DOUBLE: {
        /* the shortest form that reads back as the same double: 0.9, not the
         * 0.90000000000000002 that 17 digits always give (NaN and ±inf print as such) */
        const double v = *(const double *)base;
        for (int digits = 1; digits <= 17; digits++) {
            snprintf(buf, n, "%.*g", digits, v);
            if (strtod(buf, NULL) == v)
                break;
        }
        break;
    }
    case CFG_SIZE:
        snprintf(buf, n, "%zu", *(const size_t *)base);
        break;
    case CFG_ULONG:
        snprintf(buf, n, "%lu", *(const unsigned long *)base);
        break;
    case CFG_BOOL:
        snprintf(buf, n, "%d", *(const int *)base);
        break;
    }
}

int config_write_tsv(const config *c, FILE *out)
{
    char buf[CONFIG_VALUE_MAX];
    if (fprintf(out, "key\tvalue\n") < 0)
        return -1;
    for (size_t k = 0; k < config_n_fields; k++) {
        config_format(c, &config_fields[k], buf, sizeof buf);
        if (config_fields[k].optional == CFG_FILE_TASK_ONLY && !task_is_file(c->task))
            continue; /* a file task's own field: every other run's file is as it was */
        if (config_fields[k].optional == CFG_UNLESS_ZERO && strcmp(buf, "0") == 0)
            continue; /* a setting added later, at its old behaviour: files as before */
        if (fprintf(out, "%s\t%s\n", config_fields[k].name, buf) < 0)
            return -1;
    }
    return 0;
}

int config_read_text(config *c, const char *text, char *err, size_t n)
{
    size_t lineno = 0;
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        lineno++;
        char line[CONFIG_VALUE_MAX + 64];
        if (len >= sizeof line) {
            snprintf(err, n, "configuration line %zu is too long", lineno);
            return -1;
        }
        memcpy(line, p, len);
        line[len] = '\0';
        p = end ? end + 1 : p + len;
        if (len == 0 || strcmp(line, "key\tvalue") == 0)
            continue;
        char *tab = strchr(line, '\t');
        if (!tab) {
            snprintf(err, n, "configuration line %zu has no tab between key and value", lineno);
            return -1;
        }
        *tab = '\0';
        const config_field *f = config_find(line);
        if (!f) {
            snprintf(err, n, "configuration line %zu: unknown key '%s'", lineno, line);
            return -1;
        }
        if (config_set(c, f, tab + 1, err, n) != 0)
            return -1;
    }
    return 0;
}

/* The value of a numeric field as a double (for range checks). */
static double field_value(const config *c, const config_field *f)
{
    const char *base = (const char *)c + f->offset;
    switch (f->type) {
    case CFG_DOUBLE:
        return *(const double *)base;
    case CFG_SIZE:
        return (double)*(const size_t *)base;
    case CFG_ULONG:
        return (double)*(const unsigned long *)base;
    case CFG_BOOL:
        return (double)*(const int *)base;
    default:
        return 0.0;
    }
}

int config_check_fields(const config *c, const char *model_name, const char *const *names,
                        size_t n, char *err, size_t errn)
{
    for (size_t k = 0; k < n; k++) {
        const config_field *f = config_find(names[k]);
        if (!f || f->type == CFG_STRING) {
            snprintf(err, errn, "%s: configuration has no numeric field '%s'", model_name,
                     names[k]);
            return -1;
        }
        const double v = field_value(c, f);
        if (!(v >= f->min && v <= f->max)) { /* NaN fails too */
            char flag[CONFIG_STR_MAX], val[64];
            config_flag_name(f, flag, sizeof flag);
            config_format(c, f, val, sizeof val);
            snprintf(err, errn, "--%s: %s is out of range (accepted: [%g, %g])", flag, val,
                     f->min, f->max);
            return -1;
        }
    }
    return 0;
}

int config_check(const config *c, char *err, size_t n)
{
    if (c->train_min > c->train_max) {
        snprintf(err, n, "--train-len: minimum %zu is above maximum %zu (accepted: MIN:MAX "
                 "with MIN <= MAX)", c->train_min, c->train_max);
        return -1;
    }
    if (c->train_max > c->max_len) {
        snprintf(err, n, "--train-len: maximum %zu is above --max-len %zu (accepted: lengths "
                 "up to --max-len)", c->train_max, c->max_len);
        return -1;
    }
    return 0;
}
