/* fuzz_checkpoint.c — libFuzzer harness for the checkpoint loader: any bytes at all must
 * give either a model or one error line, never a crash, a hang or a huge allocation. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../common/checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/attnlab-fuzz-%ld.ckpt", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    char err[512];
    ckpt_train_state ts;
    model *m = ckpt_load(path, &ts, err, sizeof err);
    if (m) {
        m->ops->free(m);
        ckpt_train_state_free(&ts);
    }
    return 0;
}
