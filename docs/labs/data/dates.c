/* dates.c — writes the data set of lab 08 (docs/labs/data/dates.tsv): dates written in
 * words, and the same date as numbers, year first.
 *
 * Design. Each line is one example, SOURCE<TAB>TARGET (the format of `--task file:PATH`,
 * docs/results-format.md). A source is one of three ways of writing a date,
 *     3 march 2021          day, month, year
 *     march 3 2021          month, day, year
 *     wednesday 3 march 2021  the weekday first (its true weekday), then as the first
 * and the target is always "2021 03 03": year, month and day as numbers. The year moves
 * from the end of the source to the front of the target, so the alignment of a model
 * that learned the task is not a diagonal, and the weekday is read but never copied.
 * No line is written twice (a date drawn again in the same form is drawn anew), so no
 * test example can also be a training example.
 *
 * Invariant: the output depends on nothing but this file. The draws come from its own
 * 64-bit linear congruential generator (Knuth's MMIX constants), not from rand(), whose
 * sequence differs between C libraries: every machine writes the same bytes, and
 * `make check` compares them with the file in the repository.
 *
 * Build and run: make labdata (or cc -std=c11 -o dates dates.c && ./dates > dates.tsv).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EXAMPLES 3000
#define FIRST_YEAR 1950
#define YEARS 100 /* 1950 to 2049 */

static const char *const months[12] = {"january", "february", "march",     "april",
                                       "may",     "june",     "july",      "august",
                                       "september", "october", "november", "december"};
static const char *const weekdays[7] = {"sunday",   "monday", "tuesday", "wednesday",
                                        "thursday", "friday", "saturday"};

/* The generator's state, and one draw in [0, n): the high bits, the best of an LCG. */
static uint64_t state = 20210303u;
static unsigned draw(unsigned n)
{
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((state >> 33) % n);
}

static int leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static int days_in(int y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return days[m - 1] + (m == 2 && leap(y));
}

/* The weekday of a date, 0 = sunday (Sakamoto's method for the Gregorian calendar). */
static int weekday(int y, int m, int d)
{
    static const int t[12] = {0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4};
    if (m < 3)
        y -= 1;
    return (y + y / 4 - y / 100 + y / 400 + t[m - 1] + d) % 7;
}

/* The (date, form) pairs already written: year, month, day and form as one index. */
static unsigned char seen[YEARS * 12 * 31 * 3];

int main(void)
{
    printf("# dates.tsv: %d dates in words -> the same date as numbers, year first.\n"
           "# Written by docs/labs/data/dates.c (make labdata); lab 08 trains on it.\n",
           EXAMPLES);
    for (int k = 0; k < EXAMPLES; k++) {
        const int y = FIRST_YEAR + (int)draw(YEARS), m = 1 + (int)draw(12);
        const int d = 1 + (int)draw((unsigned)days_in(y, m));
        const unsigned form = draw(3);
        const size_t at = (((size_t)(y - FIRST_YEAR) * 12 + (size_t)(m - 1)) * 31 +
                           (size_t)(d - 1)) * 3 + form;
        if (seen[at]) {
            k--; /* written already: draw another */
            continue;
        }
        seen[at] = 1;
        if (form == 0)
            printf("%d %s %d", d, months[m - 1], y);
        else if (form == 1)
            printf("%s %d %d", months[m - 1], d, y);
        else
            printf("%s %d %s %d", weekdays[weekday(y, m, d)], d, months[m - 1], y);
        printf("\t%d %02d %02d\n", y, m, d);
    }
    return ferror(stdout) ? 1 : 0;
}
