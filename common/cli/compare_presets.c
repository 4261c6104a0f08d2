/* compare_presets.c — the table of compare's presets (see compare_presets.h).
 *
 * Design. A preset is data: the protocol of one documented experiment (docs/compare.md,
 * the manual's --preset entry, a test that holds the help and the manual to the same
 * numbers). Which setups a sweeping preset trains comes from the models' own tables
 * (model_sweep), so that this file names no model.
 */
#include "compare_presets.h"

#include <string.h>

/* The learning-rate sweep: every model at four rates a factor of about 3 apart, around
 * the models' recipes (their rates lie between 1e-3 and 3e-3). */
const char *const compare_lr_rates[] = {"lr=0.0003", "lr=0.001", "lr=0.003", "lr=0.01", NULL};

const compare_preset compare_presets[] = {
    {"smoke", 1, 40, 4, 8, 32, "2:16:2", "4,8,16", 20, 0, 1, 0, 0, 0, NULL,
     "under a minute: every model, every figure, nothing learned (a test of the pipeline)",
     SWEEP_NONE, 0},
    {"quick", 3, 6000, 4, 16, 128, "2:40:2", "8,16,32,64", 100, 10, 4, 0.999, 4000, 20, NULL,
     "a few minutes on 2 cores: attention reaches the target, a model without it is "
     "stopped short of it (the report says so)",
     SWEEP_NONE, 0},
    /* The headline: each model at the rate its sweep found best (the rate each lists for
     * "full"), so that its runs are the lrsweep's runs at those rates, command for
     * command (a test holds the two presets to that). */
    {"full", 3, 100000, 4, 32, 256, "2:64:2", "8,16,32", 250, 20, 4, 0.999, 40000, 50, NULL,
     "each model at the rate of lrsweep with the fewest steps to 0.99, trained to the target "
     "or a plateau (decay over 40000 steps, cap 100000)",
     SWEEP_OPS, 1},
    {"capacity", 3, 100000, 4, 32, 256, "2:64:2", "8,16,32", 250, 20, 4, 0.999, 40000, 50, NULL,
     "each model at the sizes its capacity sweep lists (the others once, for reference), "
     "each as full",
     SWEEP_OPS, 1},
    {"lrsweep", 3, 100000, 4, 32, 256, "2:64:2", "8,16,32", 250, 20, 4, 0.999, 40000, 50, NULL,
     "every model at rates 3e-4, 1e-3, 3e-3 and 1e-2, each as full, 3 seeds",
     SWEEP_LR, 0},
    {"control", 3, 100000, 4, 32, 256, "2:64:2", "8,16,32", 250, 20, 4, 0.999, 40000, 50, NULL,
     "the arms of the controlled experiment: with and without attention at equal "
     "parameters (the models that list a control), each as full",
     SWEEP_OPS, 0},
    {"inrange", 3, 100000, 4, 64, 256, "4:64:4", "8,16,32,64", 250, 20, 4, 0.999, 40000, 50,
     NULL, "every model trained on every length it is tested on (4 to 64), each as full",
     SWEEP_NONE, 0},
    {"positions", 3, 100000, 4, 32, 256, "2:96:2", "8,16,32", 250, 20, 4, 0.999, 40000, 50,
     NULL, "each scheme of positions (the models that list one) past the trained lengths, "
     "each as full",
     SWEEP_OPS, 0},
    {"bahdanau", 3, 100000, 5, 30, 256, NULL, "8,16,32", 250, 20, 4, 0.999, 40000, 50,
     NULL, "a task read from a file (--task file:PATH; make translate-data writes the toy "
     "translation) on 5-30 words, each model at the setup it lists for the RNNencdec and "
     "RNNsearch of Bahdanau et al. 2015; again with --train-len 5:50", SWEEP_OPS, 0},
    {"distance", 3, 100000, 4, 32, 256, "2:64:2", "8,16,32", 250, 20, 4, 0.999, 40000, 50,
     "reverse", "every model on reverse, where the gap between reading a symbol and writing "
     "it grows with its position at a fixed length (distance.tsv), each as full",
     SWEEP_NONE, 0},
};
const size_t compare_n_presets = sizeof compare_presets / sizeof compare_presets[0];

const compare_preset *compare_preset_named(const char *name)
{
    for (size_t k = 0; k < compare_n_presets; k++)
        if (strcmp(compare_presets[k].name, name) == 0)
            return &compare_presets[k];
    return NULL;
}
