/* fuzz_tokens.c — libFuzzer harness for the token-list parser (eval --input, attention
 * --input) and the TSV reader (report): any line or file is parsed or refused with one
 * message, never read or written out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/task.h"
#include "../../common/tsv.h"

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
