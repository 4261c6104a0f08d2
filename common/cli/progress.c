/* progress.c — a training run's progress on standard error: a bar or plain lines (see
 * progress.h).
 *
 * Design. The bar is one line that starts with a carriage return, so each report
 * overwrites the last; the time left is the steps left at the rate of the last interval.
 * Plain lines are for a log file or a pipe, where a carriage return would only clutter.
 */
#include "progress.h"

#include <stdio.h>

/* Writes "h:mm:ss" for a number of seconds. */
static void format_duration(char *buf, size_t n, double s)
{
    if (!(s >= 0) || s > 99 * 3600)
        s = 0;
    long k = (long)(s + 0.5);
    snprintf(buf, n, "%ld:%02ld:%02ld", k / 3600, k / 60 % 60, k % 60);
}

/* Draws the progress bar on standard error, on one line rewritten in place. */
static void draw_bar(size_t step, size_t steps, double loss, double acc, double rate)
{
    enum { WIDTH = 24 };
    char bar[WIDTH + 1], eta[32];
    size_t fill = steps ? step * WIDTH / steps : WIDTH;
    for (size_t i = 0; i < WIDTH; i++)
        bar[i] = i < fill ? '=' : (i == fill ? '>' : ' ');
    bar[WIDTH] = '\0';
    format_duration(eta, sizeof eta, rate > 0 ? (double)(steps - step) / rate : 0);
    fprintf(stderr, "\r[%s] step %zu/%zu  loss %.4f  acc %.3f  %.1f steps/s  ETA %s ", bar,
            step, steps, loss, acc, rate, eta);
    fflush(stderr);
}

void progress_show(void *ctx, train_progress style, const train_tick *tick)
{
    (void)ctx;
    if (style == TRAIN_BAR && tick->done)
        fputc('\n', stderr);
    else if (style == TRAIN_BAR)
        draw_bar(tick->step, tick->steps, tick->loss, tick->token_acc, tick->steps_per_s);
    else if (style == TRAIN_LINES && !tick->done)
        fprintf(stderr, "%s step %zu/%zu  loss %.4f  token_acc %.4f  %.0f seq/s\n",
                tick->model, tick->step, tick->steps, tick->loss, tick->token_acc,
                tick->seq_per_s);
}
