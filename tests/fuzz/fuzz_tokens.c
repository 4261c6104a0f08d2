/* fuzz_tokens.c — libFuzzer harness for the token-list parser (eval --input, attention
 * --input), the reader of data files (--task file:PATH) and the TSV reader (report): any
 * line or file is parsed or refused with one message, never read or written out of
 * bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/core/dataset.h"
#include "../../common/core/task.h"
#include "../../common/core/tsv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int tokens[16];
    size_t count;
    char err[256];
    /* a small max and vocabulary so the limits are reached often */
    if (task_parse_tokens(text, tokens, 16, 10, &count, err, sizeof err) == 0)
        for (size_t i = 0; i < count; i++)
            if (tokens[i] < 0 || tokens[i] >= 10)
                abort();
    /* the same bytes as a data file (a small max_len, so its limit is reached often):
     * every token of an example in the vocabulary, every example in one set and bucket */
    char *copy = malloc(size + 1);
    if (copy) {
        memcpy(copy, data, size);
        copy[size] = '\0';
        dataset d;
        if (dataset_parse(&d, copy, size, "fuzz.tsv", 6, err, sizeof err) == 0) {
            for (size_t i = 0; i < d.n; i++) {
                const dataset_example *e = &d.ex[i];
                if (e->Ts < 1 || e->Ts > 6 || e->Tt < 1 || e->Tt > 6 ||
                    d.b[d.bucket_of[i]].Ts != e->Ts || d.b[d.bucket_of[i]].Tt != e->Tt)
                    abort();
                for (size_t k = 0; k < e->Ts + e->Tt; k++)
                    if (e->src[k] < 0 || (size_t)e->src[k] >= d.V)
                        abort(); /* the target follows the source in the same storage */
            }
            for (size_t L = 0; L <= 8; L++)
                if (dataset_target_len(&d, L) < 1)
                    abort();
            int words[6];
            task_parse_words(&d, text, words, 6, &count, err, sizeof err);
            dataset_free(&d);
        }
    }
    tsv t;
    if (tsv_parse(&t, text, size, "fuzz.tsv", err, sizeof err) == 0) {
        for (size_t r = 0; r < t.rows; r++)
            for (size_t c = 0; c < t.cols; c++) {
                double v;
                tsv_number(&t, r, c, &v, err, sizeof err);
            }
        tsv_col(&t, "len");
    }
    tsv_free(&t); /* takes text over, whether the parse succeeded or not */
    return 0;
}
