/* cmd_files.h — the files and folders several commands share (prefix: cmd_): a file of a
 * run written whole, whether a directory holds a run, the claim of an --out directory,
 * a word of a shell command. Every file of a run is written whole or not at all
 * (afile.h), so an interrupted command never leaves a half-written file.
 */
#ifndef ATTNLAB_CMD_FILES_H
#define ATTNLAB_CMD_FILES_H

#include <stdio.h>

#include "runlock.h"

/* Writes dir/name atomically with write(f, ctx) (0 on success). Returns 0, or prints the
 * runtime error and returns -1. */
int cmd_write_file(const char *dir, const char *name, int (*write)(FILE *, const void *),
                   const void *ctx);

/* Is dir/name an existing file? */
int cmd_exists_in(const char *dir, const char *name);

/* Does dir hold a run of attnlab train (config.tsv, args.txt, model.ckpt or
 * checkpoint.ckpt)? */
int cmd_holds_run(const char *dir);

/* Claims the --out dir of a command that writes its own files there (eval, attention,
 * bench): makes dir, takes its lock into l (runlock.h), so the command never writes
 * while another one does, and, when refuse_run is set, refuses a dir holding a run of
 * attnlab train, saying why in what ("its own eval.tsv would be replaced"); refuse_run 2
 * lets through a run whose training ended (model.ckpt) and whose final evaluation was
 * stopped before any of its files was written (eval's own case). Returns 0
 * with l held, or the exit status after one line (l not held). */
int cmd_claim_out(runlock *l, const char *dir, int refuse_run, const char *what);

/* Prints s to f as one word of a POSIX shell command: as it is when it holds only
 * letters, digits and _-./:,=+@%, else in single quotes (a quote inside written '\''). */
void cmd_shell_word(FILE *f, const char *s);

/* Prints "attnlab" and then argv[0..argc), each a shell word (cmd_shell_word): the
 * command as typed, for a manifest to name what made it. */
void cmd_shell_command(FILE *f, int argc, char **argv);

/* Prints the head every manifest.tsv of a command shares: the header "key<TAB>value",
 * "command" (cmd_shell_command) and the build facts of buildinfo_write_tsv. */
void cmd_manifest_head(FILE *f, int argc, char **argv);

/* Writes dir/manifest.tsv for a command that measures (bench): "command" (attnlab, then
 * argv[0..argc), the command's name first, each a shell word) and the build facts of
 * buildinfo_write_tsv (version, commit, modified, compiler, cflags, BLAS and its kernel),
 * so a published table names what made it. Returns 0, or -1 after the error line. */
int cmd_write_manifest(const char *dir, int argc, char **argv);

#endif
