/* fuzz_args.c — libFuzzer harness for the argument parser: the input is split at NUL
 * bytes into the arguments of a train command, which must be accepted or refused with a
 * usage error, never crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX_ARGS = 32 };
    char *copy = malloc(size + 1), *argv[MAX_ARGS + 2];
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    int argc = 0;
    static char train[] = "train";
    argv[argc++] = train;
    for (size_t i = 0; i <= size && argc <= MAX_ARGS;) {
        argv[argc++] = copy + i;
        i += strlen(copy + i) + 1;
    }
    argv[argc] = NULL;
    /* --help would print the whole help text on every run: not what is being tested */
    for (int k = 1; k < argc; k++)
        if (strncmp(argv[k], "--h", 3) == 0 || strcmp(argv[k], "-h") == 0)
            argv[k][0] = 'x';
    int rc = cli_check_train_args(argc, argv);
    if (rc != 0 && rc != 2)
        abort(); /* the parser promises exactly these two answers */
    free(copy);
    return 0;
}
