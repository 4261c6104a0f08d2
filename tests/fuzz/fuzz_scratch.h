/* fuzz_scratch.h — where the harnesses write the files they hand to the code under test
 * (prefix: fuzz_scratch_).
 *
 * Design. A harness that tests a loader of files writes every input into a file first,
 * thousands of times a second. On a disk file system that is slow for a reason of its
 * own: ext4 flushes a file that was truncated and rewritten when it is closed, so the
 * fuzzer would wait for the disk at every input. A memory file system (/dev/shm on
 * Linux) has no such cost, so it is used when there is one; $ATTNLAB_FUZZ_TMP names
 * another directory, and /tmp is the last resort. Included by several harnesses, and by
 * tests/test_fuzz.c through all of them, so it is guarded and everything in it static.
 */
#ifndef ATTNLAB_FUZZ_SCRATCH_H
#define ATTNLAB_FUZZ_SCRATCH_H

#include <stdlib.h>
#include <unistd.h>

/* The directory for scratch files: $ATTNLAB_FUZZ_TMP, else /dev/shm when it is a
 * writable directory, else /tmp. */
static inline const char *fuzz_scratch_dir(void)
{
    const char *env = getenv("ATTNLAB_FUZZ_TMP");
    if (env && *env)
        return env;
    return access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
}

#endif
