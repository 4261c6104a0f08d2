/* dataset.c — reading a SOURCE<TAB>TARGET file into examples, a vocabulary, three sets
 * and buckets (see dataset.h).
 *
 * Design. The whole file is read into one buffer and parsed in one pass, line by line,
 * by the byte count (so a NUL byte is reported, never taken for an end). The words are
 * cut out in place (a NUL written over the space after each), so the vocabulary and the
 * examples point into that buffer; nothing is copied. A second pass numbers the distinct
 * words through a hash table, sorts only them, and gives every word its index in that
 * sorted vocabulary.
 */
#include "dataset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32.h"
#include "infile.h"

/* An example while the file is parsed: where its words are in the list of all words. */
typedef struct raw_example {
    size_t line, first, Ts, Tt; /* words[first .. first+Ts) source, then Tt target */
} raw_example;

/* A growing array of n items of size sz; returns -1 when memory runs out. */
static int grow(void **p, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    const size_t c = *cap ? 2 * *cap : 256;
    void *q = realloc(*p, c * sz);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* The length of the UTF-8 sequence at s (n bytes left) when it is one well-formed
 * character that is not a control character (C0, DEL, C1), else 0. */
static size_t utf8_char(const unsigned char *s, size_t n)
{
    const unsigned c = s[0];
    if (c < 0x20 || c == 0x7f)
        return 0;
    if (c < 0x80)
        return 1;
    size_t k;
    unsigned v;
    if (c >= 0xc2 && c <= 0xdf)
        k = 2, v = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        k = 3, v = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        k = 4, v = c & 0x07;
    else
        return 0;
    if (k > n)
        return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    /* overlong forms, surrogates, beyond U+10FFFF, and the C1 controls U+0080..U+009F */
    if ((k == 3 && v < 0x800) || (k == 4 && (v < 0x10000 || v > 0x10ffff)) ||
        (v >= 0xd800 && v <= 0xdfff) || (v >= 0x80 && v <= 0x9f))
        return 0;
    return k;
}

/* 64-bit FNV-1a over n bytes, continuing from h. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
#define FNV_START 0xcbf29ce484222325ull

static int cmp_word(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Order of the split: by key, then by line (a repeated line keeps the file's order). */
static int cmp_key(const void *a, const void *b)
{
    const dataset_example *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

/* Order inside a set: by lengths (the buckets), then as the split ordered them. */
static int cmp_bucket(const void *a, const void *b)
{
    const dataset_example *x = a, *y = b;
    if (x->Ts != y->Ts)
        return x->Ts < y->Ts ? -1 : 1;
    if (x->Tt != y->Tt)
        return x->Tt < y->Tt ? -1 : 1;
    return cmp_key(a, b);
}

/* Splits one side of a line (s, len bytes, not NUL-terminated) into words: a NUL after
 * each, their pointers appended to *words. Returns the count, or -1 with err written
 * (the caller has already named the file and line in what). */
static long side_words(char *s, size_t len, char ***words, size_t *nw, size_t *cap,
                       const char *what, size_t max_len, char *err, size_t n)
{
    long count = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && s[i] == ' ')
            i++;
        if (i == len)
            break;
        const size_t start = i;
        while (i < len && s[i] != ' ')
            i++;
        if (i - start > DATASET_WORD_MAX) {
            snprintf(err, n, "%s: the symbol '%.20s...' is %zu bytes long (accepted: at most "
                     "%d)", what, s + start, i - start, DATASET_WORD_MAX);
            return -1;
        }
        if ((size_t)count == max_len) {
            snprintf(err, n, "%s holds more than %zu symbols (accepted: at most --max-len "
                     "%zu)", what, max_len, max_len);
            return -1;
        }
        if (grow((void **)words, cap, *nw, sizeof **words) != 0) {
            snprintf(err, n, "%s: out of memory", what);
            return -1;
        }
        s[i] = '\0'; /* over the space or the tab (or the line's end) after the word */
        (*words)[(*nw)++] = s + start;
        count++;
        i++;
    }
    return count;
}

/* Checks one line (s, len bytes, without its newline) for bytes the format refuses.
 * Returns 0, or -1 with err naming the column. */
static int check_bytes(const char *where, const unsigned char *s, size_t len, char *err,
                       size_t n)
{
    for (size_t i = 0; i < len;) {
        if (s[i] == '\t') {
            i++;
            continue;
        }
        const size_t k = utf8_char(s + i, len - i);
        if (k == 0) {
            if (s[i] < 0x20 || s[i] == 0x7f)
                snprintf(err, n, "%s: a control character (byte 0x%02x) at column %zu "
                         "(accepted: words of printable UTF-8 text)", where, s[i], i + 1);
            else
                snprintf(err, n, "%s: bytes that are not UTF-8 text at column %zu (accepted: "
                         "words of printable UTF-8 text)", where, i + 1);
            return -1;
        }
        i += k;
    }
    return 0;
}

/* Pass one: every line into raw examples and the list of all words; the comment lines
 * are counted into d (comments, and comments_tab for those that hold a tab). */
static int parse_lines(dataset *d, char *text, size_t len, const char *name, size_t max_len,
                       raw_example **ex, size_t *nex, char ***words, size_t *nw, char *err,
                       size_t n)
{
    size_t cap_ex = 0, cap_w = 0, lineno = 0;
    for (size_t at = 0; at < len;) {
        char *line = text + at;
        const char *nl = memchr(line, '\n', len - at);
        size_t l = nl ? (size_t)(nl - line) : len - at;
        at += l + (nl != NULL);
        lineno++;
        if (l && line[l - 1] == '\r')
            l--; /* a file written on Windows */
        char where[256];
        snprintf(where, sizeof where, "%.200s line %zu", name, lineno);
        size_t blank = 0;
        while (blank < l && line[blank] == ' ')
            blank++;
        if (blank == l)
            continue;
        if (line[0] == '#') { /* a comment, even when it looks like an example */
            d->comments++;
            d->comments_tab += memchr(line, '\t', l) != NULL;
            continue;
        }
        if (check_bytes(where, (const unsigned char *)line, l, err, n) != 0)
            return -1;
        char *tab = memchr(line, '\t', l);
        if (!tab) {
            snprintf(err, n, "%s: no tab between source and target (accepted: "
                     "SOURCE<TAB>TARGET)", where);
            return -1;
        }
        const size_t ls = (size_t)(tab - line), lt = l - ls - 1;
        if (memchr(tab + 1, '\t', lt)) {
            snprintf(err, n, "%s: more than one tab (accepted: one, between source and "
                     "target)", where);
            return -1;
        }
        char what[sizeof where + 16];
        const size_t first = *nw;
        snprintf(what, sizeof what, "%s, the source", where);
        const long Ts = side_words(line, ls, words, nw, &cap_w, what, max_len, err, n);
        if (Ts < 0)
            return -1;
        snprintf(what, sizeof what, "%s, the target", where);
        const long Tt = side_words(tab + 1, lt, words, nw, &cap_w, what, max_len, err, n);
        if (Tt < 0)
            return -1;
        if (Ts == 0 || Tt == 0) {
            snprintf(err, n, "%s: the %s is empty (accepted: symbols on both sides of the "
                     "tab)", where, Ts == 0 ? "source" : "target");
            return -1;
        }
        if (grow((void **)ex, &cap_ex, *nex, sizeof **ex) != 0) {
            snprintf(err, n, "%s: out of memory", name);
            return -1;
        }
        (*ex)[(*nex)++] = (raw_example){lineno, first, (size_t)Ts, (size_t)Tt};
    }
    return 0;
}

/* Inserts word number i of all into the table slot (cap entries, a power of two; each
 * entry 0 when empty, else 1 + the number of the distinct word it holds, uniq[that]).
 * Returns the word's number: a new one (*V grows) when it was not there yet. */
static size_t intern(size_t *slot, size_t cap, char **uniq, size_t *V, char *w)
{
    size_t h = (size_t)fnv1a(FNV_START, w, strlen(w)) & (cap - 1);
    while (slot[h] && strcmp(uniq[slot[h] - 1], w) != 0)
        h = (h + 1) & (cap - 1);
    if (!slot[h]) {
        uniq[*V] = w;
        slot[h] = ++*V;
    }
    return slot[h] - 1;
}

/* Pass two: the vocabulary (sorted, each word once) and every word's index in it, into
 * d->tokens. A hash table numbers the distinct words in the order first met; only they
 * are sorted, and the numbers are then mapped to their places. */
static int make_vocabulary(dataset *d, char **all, size_t nw, const char *name, char *err,
                           size_t n)
{
    size_t cap = 256, V = 0;
    size_t *slot = calloc(cap, sizeof *slot), *place = NULL;
    char **uniq = malloc((nw ? nw : 1) * sizeof *uniq), **sorted = NULL;
    d->tokens = malloc((nw ? nw : 1) * sizeof *d->tokens);
    int rc = !slot || !uniq || !d->tokens ? -1 : 0;
    for (size_t i = 0; i < nw && rc == 0; i++) {
        if (2 * (V + 1) > cap) { /* keep the table at most half full */
            free(slot);
            cap *= 2;
            if (!(slot = calloc(cap, sizeof *slot))) {
                rc = -1;
                break;
            }
            const size_t had = V;
            V = 0;
            for (size_t j = 0; j < had; j++)
                intern(slot, cap, uniq, &V, uniq[j]);
        }
        d->tokens[i] = (int)intern(slot, cap, uniq, &V, all[i]);
    }
    if (rc == 0 && (!(sorted = malloc((V ? V : 1) * sizeof *sorted)) ||
                    !(place = malloc((V ? V : 1) * sizeof *place))))
        rc = -1;
    if (rc == 0) {
        memcpy(sorted, uniq, V * sizeof *sorted);
        qsort(sorted, V, sizeof *sorted, cmp_word);
        for (size_t j = 0; j < V; j++)
            place[j] = (size_t)((char **)bsearch(&uniq[j], sorted, V, sizeof *sorted,
                                                 cmp_word) - sorted);
        for (size_t i = 0; i < nw; i++)
            d->tokens[i] = (int)place[d->tokens[i]];
        d->words = sorted;
        d->V = V;
    } else {
        free(sorted);
    }
    free(slot);
    free(place);
    free(uniq);
    if (rc != 0) {
        snprintf(err, n, "%s: out of memory", name);
        return -1;
    }
    if (V < 2 || V > DATASET_MAX_SYMBOLS) {
        snprintf(err, n, "%.200s: %zu distinct symbols (accepted: 2 to %d)", name, V,
                 DATASET_MAX_SYMBOLS);
        return -1;
    }
    return 0;
}

/* Pass three: tokens, keys, the three sets, the buckets. */
static int arrange(dataset *d, const raw_example *raw, char **all)
{
    d->ex = malloc(d->n * sizeof *d->ex);
    d->bucket_of = malloc(d->n * sizeof *d->bucket_of);
    d->b = malloc(d->n * sizeof *d->b);
    if (!d->ex || !d->bucket_of || !d->b)
        return -1;
    for (size_t k = 0; k < d->n; k++) {
        const raw_example *r = &raw[k];
        /* the key: the words of the source joined by one space, a tab, the target's */
        uint64_t h = FNV_START;
        for (size_t i = 0; i < r->Ts + r->Tt; i++) {
            if (i)
                h = fnv1a(h, i == r->Ts ? "\t" : " ", 1);
            h = fnv1a(h, all[r->first + i], strlen(all[r->first + i]));
        }
        d->ex[k] = (dataset_example){r->line, h, r->Ts, r->Tt, d->tokens + r->first,
                                     d->tokens + r->first + r->Ts};
        if (r->Ts > d->max_Ts)
            d->max_Ts = r->Ts;
        if (r->Tt > d->max_Tt)
            d->max_Tt = r->Tt;
    }
    /* the split: 80% / 10% / 10% of the examples ordered by key, at least one each */
    qsort(d->ex, d->n, sizeof *d->ex, cmp_key);
    const size_t tenth = d->n / 10 ? d->n / 10 : 1;
    d->set[DATASET_TRAIN] = (dataset_range){0, d->n - 2 * tenth};
    d->set[DATASET_VAL] = (dataset_range){d->n - 2 * tenth, tenth};
    d->set[DATASET_TEST] = (dataset_range){d->n - tenth, tenth};
    for (int s = 0; s < DATASET_N_SETS; s++) {
        const dataset_range r = d->set[s];
        qsort(d->ex + r.first, r.count, sizeof *d->ex, cmp_bucket);
        d->buckets[s].first = d->nb;
        for (size_t i = r.first; i < r.first + r.count; i++) {
            dataset_bucket *last = d->nb > d->buckets[s].first ? &d->b[d->nb - 1] : NULL;
            if (!last || last->Ts != d->ex[i].Ts || last->Tt != d->ex[i].Tt)
                d->b[d->nb++] = (dataset_bucket){d->ex[i].Ts, d->ex[i].Tt, {i, 0}};
            d->b[d->nb - 1].ex.count++;
            d->bucket_of[i] = d->nb - 1;
        }
        d->buckets[s].count = d->nb - d->buckets[s].first;
    }
    d->tlen_at = calloc(d->max_Ts + 1, sizeof *d->tlen_at);
    if (!d->tlen_at)
        return -1;
    for (size_t i = 0; i < d->n; i++)
        if (d->ex[i].Tt > d->tlen_at[d->ex[i].Ts])
            d->tlen_at[d->ex[i].Ts] = d->ex[i].Tt;
    return 0;
}

int dataset_parse(dataset *d, char *text, size_t len, const char *name, size_t max_len,
                  char *err, size_t n)
{
    memset(d, 0, sizeof *d);
    d->text = text;
    d->crc = crc32_update(0, text, len); /* over every byte, a byte-order mark included */
    /* a UTF-8 byte-order mark, which some editors write first, is not part of a word */
    const size_t skip = len >= 3 && memcmp(text, DATASET_BOM, 3) == 0 ? 3 : 0;
    d->bom = skip != 0;
    raw_example *raw = NULL;
    char **all = NULL;
    size_t nw = 0;
    int rc = parse_lines(d, text + skip, len - skip, name, max_len, &raw, &d->n, &all, &nw,
                         err, n);
    if (rc == 0 && d->n < DATASET_MIN_EXAMPLES) {
        snprintf(err, n, "%.200s: %zu examples (accepted: at least %d, so that the training, "
                 "validation and test sets each hold one)", name, d->n, DATASET_MIN_EXAMPLES);
        rc = -1;
    }
    if (rc == 0)
        rc = make_vocabulary(d, all, nw, name, err, n);
    if (rc == 0 && arrange(d, raw, all) != 0) {
        snprintf(err, n, "%.200s: out of memory", name);
        rc = -1;
    }
    free(raw);
    free(all);
    if (rc != 0)
        dataset_free(d);
    return rc;
}

int dataset_read(dataset *d, const char *path, size_t max_len, char *err, size_t n)
{
    memset(d, 0, sizeof *d);
    size_t len = 0;
    char *text = infile_read(path, DATASET_MAX_BYTES, &len, err, n); /* no FIFO, no directory */
    if (!text)
        return -1;
    return dataset_parse(d, text, len, path, max_len, err, n);
}

void dataset_summary(const dataset *d, char *buf, size_t n)
{
    int k = snprintf(buf, n, "%zu examples (%zu training, %zu validation, %zu test), %zu "
                     "symbols", d->n, d->set[DATASET_TRAIN].count, d->set[DATASET_VAL].count,
                     d->set[DATASET_TEST].count, d->V);
    if (k >= 0 && (size_t)k < n && d->comments)
        k += snprintf(buf + k, n - (size_t)k, "; %zu comment line%s skipped (a comment is a "
                      "line whose first character is '#')", d->comments,
                      d->comments == 1 ? "" : "s");
    if (k >= 0 && (size_t)k < n && d->comments_tab)
        k += snprintf(buf + k, n - (size_t)k, ", %zu of them with a tab as in an example: "
                      "start such a line with a space to make it one", d->comments_tab);
    if (k >= 0 && (size_t)k < n && d->bom)
        snprintf(buf + k, n - (size_t)k, "; a UTF-8 byte-order mark skipped");
}

void dataset_free(dataset *d)
{
    free(d->text);
    free(d->words);
    free(d->ex);
    free(d->bucket_of);
    free(d->b);
    free(d->tlen_at);
    free(d->tokens);
    memset(d, 0, sizeof *d);
}

size_t dataset_target_len(const dataset *d, size_t Ts)
{
    if (Ts > d->max_Ts)
        Ts = d->max_Ts;
    for (size_t k = 0; k <= d->max_Ts; k++) {
        if (Ts > k && d->tlen_at[Ts - k])
            return d->tlen_at[Ts - k];
        if (Ts + k <= d->max_Ts && d->tlen_at[Ts + k])
            return d->tlen_at[Ts + k];
    }
    return d->max_Tt; /* not reached: some length holds an example */
}

size_t dataset_lengths(const dataset *d, dataset_set s, size_t lo, size_t hi, size_t *out)
{
    size_t k = 0;
    const dataset_range r = d->buckets[s];
    for (size_t i = r.first; i < r.first + r.count; i++) {
        const size_t L = d->b[i].Ts;
        if (L >= lo && L <= hi && (k == 0 || out[k - 1] != L))
            out[k++] = L;
    }
    return k;
}

dataset_range dataset_within(const dataset *d, dataset_set s, size_t lo, size_t hi)
{
    const dataset_range r = d->set[s];
    size_t a = r.first, z = r.first + r.count;
    while (a < z && d->ex[a].Ts < lo)
        a++;
    size_t e = a;
    while (e < z && d->ex[e].Ts <= hi)
        e++;
    return (dataset_range){a, e - a};
}

const dataset_bucket *dataset_pick_bucket(const dataset *d, dataset_set s, size_t lo,
                                          size_t hi, const gsl_rng *r)
{
    const dataset_range w = dataset_within(d, s, lo, hi);
    const size_t pick = w.first + (size_t)gsl_rng_uniform_int(r, (unsigned long)w.count);
    return &d->b[d->bucket_of[pick]];
}

size_t dataset_draw(const dataset_bucket *bk, const gsl_rng *r)
{
    return bk->ex.first + (size_t)gsl_rng_uniform_int(r, (unsigned long)bk->ex.count);
}

long dataset_word(const dataset *d, const char *word, size_t len)
{
    if (len > DATASET_WORD_MAX)
        return -1;
    char w[DATASET_WORD_MAX + 1];
    memcpy(w, word, len);
    w[len] = '\0';
    const char *key = w;
    char **hit = bsearch(&key, d->words, d->V, sizeof *d->words, cmp_word);
    return hit ? (long)(hit - d->words) : -1;
}

long dataset_find(const dataset *d, const int *src, size_t Ts)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->ex[i].Ts == Ts && memcmp(d->ex[i].src, src, Ts * sizeof *src) == 0)
            return (long)i;
    return -1;
}
