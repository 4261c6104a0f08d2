/* cmd_stop.c — stopping a command cleanly: SIGINT and SIGTERM set a flag the long loops
 * read (training, the final evaluation, compare's scheduler), and a run started by
 * compare stops the same way once compare is gone (see cmd_stop.h).
 *
 * Design. A handler only stores the signal number in cmd_stop_signal (sig_atomic_t);
 * every loop that can take long reads it between steps and ends in order, saving what
 * it must. The handlers are installed without SA_RESTART, so a wait() in compare returns
 * at once; the watch of compare uses SA_RESTART, so writes and waits go on undisturbed.
 */
#include "cmd_stop.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

volatile sig_atomic_t cmd_stop_signal;

static void on_stop_signal(int sig) { cmd_stop_signal = sig; }

void cmd_catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int cmd_stopped_status(void) { return 128 + (int)cmd_stop_signal; }

/* The compare process this run was started by (0: none), watched by cmd_watch_parent. */
static pid_t watched_parent;

/* SIGALRM: when compare is gone, this process has another parent; stop as on SIGTERM. */
static void on_watch_tick(int sig)
{
    (void)sig;
    if (getppid() != watched_parent && !cmd_stop_signal)
        cmd_stop_signal = SIGTERM;
}

void cmd_watch_parent(void)
{
    const char *env = getenv(CMD_PARENT_ENV);
    char *end;
    if (!env || !*env)
        return;
    const long pid = strtol(env, &end, 10);
    if (*end != '\0' || pid <= 1 || (pid_t)pid != getppid())
        return; /* not started by that compare: nothing to watch */
    watched_parent = (pid_t)pid;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_watch_tick;
    sa.sa_flags = SA_RESTART; /* file writes and waits go on undisturbed */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct itimerval every = {{0, 200000}, {0, 200000}};
    setitimer(ITIMER_REAL, &every, NULL);
}
