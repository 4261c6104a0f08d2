/* cmd_stop.h — stopping a command cleanly on SIGINT or SIGTERM, and a run of compare's
 * stopping once compare is gone (prefix: cmd_).
 */
#ifndef ATTNLAB_CMD_STOP_H
#define ATTNLAB_CMD_STOP_H

#include <signal.h>

/* Set to the signal number by SIGINT or SIGTERM once cmd_catch_stop_signals has run:
 * training finishes its step and saves, the final evaluation of train stops before its
 * next chunk of sequences (writing no eval.tsv), compare starts no new run. */
extern volatile sig_atomic_t cmd_stop_signal;

/* Installs the handlers of SIGINT and SIGTERM (without SA_RESTART, so a wait() in
 * compare returns at once). */
void cmd_catch_stop_signals(void);

/* The environment variable in which compare passes its pid to the train runs it starts:
 * a run whose parent is that process stops (state saved, as on SIGTERM) once it is gone,
 * whatever ended it, SIGKILL included. */
#define CMD_PARENT_ENV "ATTNLAB_COMPARE_PID"

/* When compare started this run (its pid in CMD_PARENT_ENV, and it is still the parent),
 * checks five times a second that it still is, so the run stops, state saved, once
 * compare is gone, however compare ended. A pipe to a compare that is gone must not kill
 * the run before it saves: SIGPIPE is ignored then. */
void cmd_watch_parent(void);

/* The exit status of a command stopped by cmd_stop_signal: 128 + the signal, as shells
 * report it. */
int cmd_stopped_status(void);

#endif
