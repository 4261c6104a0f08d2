/* web_run.c — the state the page's entry points share: the open runs, the one-line error
 * and the text the page reads back (see web_run.h).
 *
 * Design. The page calls one entry point at a time (each Worker holds its own module),
 * so this is plain static state. It lives apart from web_page.c, which makes and trains
 * runs, so that web_settings.c and web_decode.c, which web_page.c calls, need nothing
 * from it in return.
 */
#include <stdio.h>
#include <stdlib.h>

#include "web_page.h"
#include "web_run.h"

page_run *page_runs[PAGE_RUNS_MAX];
char page_err[PAGE_ERR_MAX];
static char *page_out; /* the text of the last page_decode or page_config */

/* The one-line reason the last call failed ("" after a success). */
const char *page_error(void) { return page_err; }

/* The text page_decode produced: "decoded\tW1 W2 ...", then "target\tW1 W2 ..." (the
 * task's, or the data file's when it holds the source; absent otherwise), then
 * "correct\tK/N" when there is a target; one line each. */
const char *page_text(void) { return page_out ? page_out : ""; }

void page_set_text(char *text)
{
    free(page_out);
    page_out = text;
}

page_run *page_get(int h)
{
    if (h < 1 || h > PAGE_RUNS_MAX || !page_runs[h - 1]) {
        snprintf(page_err, sizeof page_err, "no run %d is open", h);
        return NULL;
    }
    page_err[0] = '\0';
    return page_runs[h - 1];
}
