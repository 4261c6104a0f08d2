/* fuzz_checkpoint.c — libFuzzer harness for the checkpoint loader: any bytes at all must
 * give either a model or one error line, never a crash, a hang or a huge allocation.
 *
 * Design. A checkpoint is guarded by two CRC-32s (docs/checkpoint-format.md): the header
 * CRC at offset 24 over bytes 0-23, and the file CRC in the last 4 bytes over every byte
 * before them, at the offset the header's length L names. A mutation of a real file
 * nearly always breaks one of them, so raw bytes would test the CRC check and little
 * else. Most inputs are therefore repaired first, as a writer would have produced them,
 * so that the mutations reach the parsers behind the CRCs: the model name, the
 * configuration text, the tensor table, the parameters and the training state.
 *
 * The last byte of the input chooses (its value is free: in a repaired file the file CRC
 * overwrites it):
 *   low 4 bits 0    raw: the bytes as given (1 input in 16: the CRC checks themselves)
 *   low 4 bits 1    the header CRC only, L as given: the length checks, and the walk of a
 *                   file cut short that names its missing part (1 in 16)
 *   otherwise       L set to the input's length, both CRCs recomputed (14 in 16)
 *   bit 4           load without asking for the training state (as eval does), so its
 *                   section is walked but not kept
 * The repaired copy is the file the loader reads (in fuzz_scratch_dir()); the input
 * itself is never changed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/core/checkpoint.h"
#include "../../common/core/checkpoint_format.h"
#include "../../common/core/crc32.h"
#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The file each input is written to (one per process, removed at exit). */
static char fuzz_ckpt_path[256];

static void fuzz_ckpt_remove(void) { unlink(fuzz_ckpt_path); }

/* Stores v little-endian in n bytes at p. */
static void fuzz_ckpt_put_le(uint8_t *p, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Repairs b (size bytes) in place as mode says (see the design above). */
static void fuzz_ckpt_repair(uint8_t *b, size_t size, unsigned mode)
{
    if (mode == 0 || size < CKPT_HEADER_SIZE)
        return;
    const int whole = mode != 1 && size >= CKPT_HEADER_SIZE + CKPT_CRC_SIZE;
    if (whole) /* the recorded length L is the file's length */
        fuzz_ckpt_put_le(b + 16, size, 8);
    fuzz_ckpt_put_le(b + CKPT_HEADER_CRC_AT, crc32_update(0, b, CKPT_HEADER_CRC_AT), 4);
    if (whole) /* the file CRC covers the header and its CRC too */
        fuzz_ckpt_put_le(b + size - CKPT_CRC_SIZE,
                         crc32_update(0, b, size - CKPT_CRC_SIZE), 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fuzz_ckpt_path[0]) {
        snprintf(fuzz_ckpt_path, sizeof fuzz_ckpt_path, "%s/attnlab-fuzz-%ld.ckpt",
                 fuzz_scratch_dir(), (long)getpid());
        atexit(fuzz_ckpt_remove);
    }
    const unsigned choice = size ? data[size - 1] : 0;
    uint8_t *b = malloc(size ? size : 1);
    if (!b)
        return 0;
    memcpy(b, data, size);
    fuzz_ckpt_repair(b, size, choice & 15u);
    FILE *f = fopen(fuzz_ckpt_path, "wb");
    if (!f) {
        free(b);
        return 0;
    }
    fwrite(b, 1, size, f);
    fclose(f);
    free(b);

    char err[512];
    ckpt_train_state ts;
    ckpt_train_state *want = (choice & 16u) ? NULL : &ts;
    model *m = ckpt_load(fuzz_ckpt_path, want, err, sizeof err);
    if (m) {
        /* what the loader promises of a model it returns */
        if (m->params.n_tensors == 0 || !m->params.data)
            abort();
        if (want && ts.m && (ts.n != m->params.size || !ts.v))
            abort();
        m->ops->free(m);
    } else if (want && ts.m) {
        abort(); /* a refused file leaves the state empty */
    }
    if (want)
        ckpt_train_state_free(&ts);
    return 0;
}
