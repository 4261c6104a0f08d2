/* attnlab.c — the model registry and the program's entry point.
 *
 * This is the one file that names every model: the harness in common/ reaches them only
 * through the table below (see common/core/model.h). To add a model, write its folder, then
 * add its ops table here. Built twice: as the program (with main) and, with
 * ATTNLAB_NO_MAIN, as the registry the test program links. */
#include "common/cli/cli.h"
#include "common/core/layerbench.h"
#include "common/core/model.h"
#include "lstm/lstm.h"
#include "rnn_attention/rnnattn.h"
#include "transformer/tfm.h"

const model_ops *const model_registry[] = {
    &lstm_ops,
    &rnnattn_ops,
    &tfm_ops,
    NULL,
};

/* One layer of each model, for `attnlab bench --layers` (common/core/layerbench.h); each is
 * defined in its folder's *_layerbench.c. */
extern const layerbench_ops lstm_layerbench_ops, gru_layerbench_ops, tfm_layerbench_ops;
const layerbench_ops *const layerbench_registry[] = {
    &lstm_layerbench_ops,
    &gru_layerbench_ops,
    &tfm_layerbench_ops,
    NULL,
};

#ifndef ATTNLAB_NO_MAIN
int main(int argc, char **argv)
{
    return cli_main(argc, argv);
}
#endif
