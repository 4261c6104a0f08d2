/* dataset.h — your own data: a file of SOURCE<TAB>TARGET lines read as a task's examples
 * (prefix: dataset_).
 *
 * Design. The file is UTF-8 text, one example a line: the source, one tab, the target,
 * each a list of symbols separated by spaces (a symbol is any word without a tab, a space
 * or a control character). Blank lines and comments are skipped: a comment is a line
 * whose first byte is '#' (a word starting with '#' is data when a space comes before
 * it); they are counted, so that a summary can say how many were skipped. A UTF-8
 * byte-order mark at the very start is skipped too (it is no part of the first word). The
 * vocabulary is every symbol of both sides, sorted by its bytes (strcmp), so token k is
 * the k-th word whatever order the lines come in; BOS is V, as for every task.
 *
 * The split. Every example gets a key: the 64-bit FNV-1a hash of its text as symbols
 * (the source words joined by one space, a tab, the target words), so the key does not
 * depend on the seed, on the line's position or on how many spaces separate its words.
 * Ordered by key, the first 80% are the training set, the next 10% the validation set
 * and the last 10% the test set (each at least one example): every model and seed sees
 * the same three sets, and reordering the file changes none of them. A line repeated in
 * the file is two examples with one key, next to each other in that order.
 *
 * Buckets. The models need one source length Ts and one target length Tt per batch (no
 * padding), so inside each set the examples are sorted by (Ts, Tt, key) and every run of
 * equal (Ts, Tt) is a bucket. A training batch picks one training example uniformly
 * (so a bucket in proportion to its size: dataset_pick_bucket) and draws all B examples
 * of the batch from its bucket, with replacement (dataset_draw).
 *
 * Invariants: ex[] holds the training set, then the validation set, then the test set;
 * buckets never cross a set; every token is in [0, V).
 */
#ifndef ATTNLAB_DATASET_H
#define ATTNLAB_DATASET_H

#include <gsl/gsl_rng.h>
#include <stddef.h>
#include <stdint.h>

#define DATASET_MIN_EXAMPLES 10        /* so that each set holds at least one */
#define DATASET_WORD_MAX 64            /* bytes of one symbol */
#define DATASET_MAX_BYTES (64ul << 20) /* the largest file read */
#define DATASET_MAX_SYMBOLS 1000       /* the vocabulary's limit (--symbols' range) */
#define DATASET_BOM "\xef\xbb\xbf"     /* the UTF-8 byte-order mark, skipped at the start */

/* The three sets of a file, in the order of ex[]. */
typedef enum {
    DATASET_TRAIN = 0,
    DATASET_VAL = 1,
    DATASET_TEST = 2,
    DATASET_N_SETS = 3
} dataset_set;

typedef struct dataset_example {
    size_t line;    /* 1-based line of the file (for messages) */
    uint64_t key;   /* FNV-1a of the example's text: decides its set */
    size_t Ts, Tt;  /* source and target lengths */
    const int *src; /* (Ts) tokens, inside dataset.tokens */
    const int *tgt; /* (Tt) tokens */
} dataset_example;

typedef struct dataset_range {
    size_t first, count; /* ex[first .. first+count) or b[first .. first+count) */
} dataset_range;

typedef struct dataset_bucket {
    size_t Ts, Tt;
    dataset_range ex; /* its examples, all of lengths (Ts, Tt) */
} dataset_bucket;

typedef struct dataset {
    uint32_t crc;          /* CRC-32 of the file's bytes (all of them) */
    size_t comments;       /* comment lines skipped (first byte '#') */
    size_t comments_tab;   /* of them, those holding a tab, as an example would */
    int bom;               /* 1: the file began with a UTF-8 byte-order mark (skipped) */
    size_t V;              /* symbols in the vocabulary */
    char **words;          /* (V) the vocabulary, sorted by bytes; word k is token k */
    size_t n;              /* examples */
    dataset_example *ex;   /* (n) the three sets in order, each sorted by (Ts, Tt, key) */
    size_t *bucket_of;     /* (n) the bucket of each example */
    dataset_bucket *b;     /* (nb) buckets, in the order of ex[] */
    size_t nb;
    dataset_range set[DATASET_N_SETS];    /* each set's examples */
    dataset_range buckets[DATASET_N_SETS]; /* each set's buckets */
    size_t max_Ts, max_Tt; /* the longest source and target of the file */
    size_t *tlen_at;       /* (max_Ts + 1) longest target of each source length; 0: none */
    char *text;            /* the file's bytes, words cut out in place (storage) */
    int *tokens;           /* every example's source then target (storage) */
} dataset;

/* Parses the len bytes at text (a malloc'ed buffer of len + 1 bytes, which d takes over
 * whatever the outcome) as the file called name: examples, vocabulary, sets, buckets.
 * A side may hold at most max_len symbols. Returns 0; or -1 with one line in err that
 * names the file, the line and what is wrong (no tab, more than one tab, an empty side,
 * a control character, bytes that are not UTF-8, a symbol longer than DATASET_WORD_MAX,
 * more than max_len symbols), or the file and the count (fewer than
 * DATASET_MIN_EXAMPLES examples, fewer than 2 or more than DATASET_MAX_SYMBOLS
 * symbols); d is then empty. */
int dataset_parse(dataset *d, char *text, size_t len, const char *name, size_t max_len,
                  char *err, size_t n);

/* Reads the file at path (at most DATASET_MAX_BYTES) and parses it (dataset_parse).
 * Returns 0, or -1 with one line in err (a file that cannot be read is named with the
 * reason). */
int dataset_read(dataset *d, const char *path, size_t max_len, char *err, size_t n);

/* Writes one line (n bytes, no newline) saying what the file gave: its examples and
 * their split, its symbols, and — when there were any — the comment lines skipped (with
 * what a comment is, and how many of them hold a tab as an example does) and the
 * byte-order mark skipped. */
void dataset_summary(const dataset *d, char *buf, size_t n);

/* Frees everything d holds and zeroes it. Safe on a zeroed dataset. */
void dataset_free(dataset *d);

/* The target length of a source of Ts symbols: the longest target of the file's
 * sources of that length, or of the nearest length it holds (the shorter on a tie). */
size_t dataset_target_len(const dataset *d, size_t Ts);

/* The distinct source lengths of set s within [lo, hi], ascending, into out (room for
 * max_Ts); returns how many. */
size_t dataset_lengths(const dataset *d, dataset_set s, size_t lo, size_t hi, size_t *out);

/* The examples of set s whose source length lies in [lo, hi]: a range of ex[] (the set
 * is sorted by length). Its count may be 0. */
dataset_range dataset_within(const dataset *d, dataset_set s, size_t lo, size_t hi);

/* Picks the bucket of a batch from set s, sources of lengths in [lo, hi]: the bucket of
 * one example drawn uniformly from that range, so a bucket in proportion to its size.
 * The batch then draws its examples from the bucket uniformly, with replacement
 * (dataset_draw). The range must not be empty (dataset_within). */
const dataset_bucket *dataset_pick_bucket(const dataset *d, dataset_set s, size_t lo,
                                          size_t hi, const gsl_rng *r);

/* One example of bucket bk drawn uniformly: its index into ex[]. */
size_t dataset_draw(const dataset_bucket *bk, const gsl_rng *r);

/* The token of the word of len bytes at word (not NUL-terminated) in d's vocabulary; -1
 * when the vocabulary has no such word. */
long dataset_word(const dataset *d, const char *word, size_t len);

/* The first example whose source is src (Ts tokens), or -1 when the file has none. */
long dataset_find(const dataset *d, const int *src, size_t Ts);

#endif
