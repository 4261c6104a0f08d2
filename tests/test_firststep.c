/* test_firststep.c — the first step is the same wherever a reader starts, and the times
 * the documents promise agree with each other.
 *
 * What is checked.
 *   - The five pages a reader may open first (README.md, docs/README.md,
 *     docs/labs/README.md and their Chinese counterparts docs/zh/README.md and
 *     docs/zh/labs/README.md) each give the same two commands as lines of a ```sh block
 *     (`make demo`, `make check`), name `make web` as the third way, and give the command
 *     that installs beforehand exactly the packages .ci/deps.sh would install: the
 *     Debian packages after `sudo apt-get install ` and the Homebrew ones after
 *     `brew install `, in the order deps.sh lists them. A package added to deps.sh
 *     fails this test until every page names it.
 *   - They state one duration of `make demo` on two cores and the measurement behind it,
 *     its processor time (the two cores share it): "about M minutes on two cores
 *     (measured: S s of processor time" in English, "约需 M 分钟（实测：含编译共用处理器
 *     时间 S 秒" in Chinese, the same M and S in all five, and M minutes lie between
 *     S/2 seconds (both cores busy all along) and S (one core), give or take half a
 *     minute.
 *   - Each lab handout states how long its commands took on two cores, measured: "Its
 *     commands take T on a two-core machine (measured)" in English, "实测用时 T。" in
 *     Chinese (T as "2 min 40 s", "2 min" or "40 s"; "2 分 40 秒", "2 分钟" or "40 秒"),
 *     the same time in both, and the labs' tables (docs/labs/README.md,
 *     docs/zh/labs/README.md) give that time in the row of the lab.
 *
 * Runs from the top of the source tree, like the other suites. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testhandout.h"
#include "testutil.h"

#define N_PAGES 5
#define LIST_LEN 512

/* The pages a reader may open first; the Chinese ones are marked. */
static const struct {
    const char *path;
    int zh;
} pages[N_PAGES] = {{"README.md", 0},
                    {"docs/README.md", 0},
                    {"docs/labs/README.md", 0},
                    {"docs/zh/README.md", 1},
                    {"docs/zh/labs/README.md", 1}};

/* Does a ```sh block of text hold a line that starts with command followed by a blank or the
 * line's end? */
static int sh_block_has(const char *text, const char *command)
{
    int in_sh = 0;
    const size_t n = strlen(command);
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        if (!end)
            end = p + strlen(p);
        if (strncmp(p, "```", 3) == 0)
            in_sh = !in_sh && strncmp(p, "```sh", 5) == 0;
        else if (in_sh && (size_t)(end - p) >= n && strncmp(p, command, n) == 0 &&
                 (p + n == end || p[n] == ' '))
            return 1;
        p = *end ? end + 1 : end;
    }
    return 0;
}

/* The packages of the default need list of .ci/deps.sh (the branch that is neither fuzz
 * nor web): Debian's into deb, Homebrew's into brew, each separated by single spaces. */
static void deps_packages(char *deb, char *brew, size_t n)
{
    char *text = ho_read_file(".ci/deps.sh");
    ck_assert_msg(text != NULL, "cannot read .ci/deps.sh");
    deb[0] = brew[0] = '\0';
    const char *p = strstr(text, "\nelse\n");
    ck_assert_msg(p != NULL, ".ci/deps.sh: no 'else' branch of the need list");
    const char *end = strstr(p, "\nfi\n");
    ck_assert_msg(end != NULL, ".ci/deps.sh: the need list does not end with 'fi'");
    size_t found = 0;
    for (p += 6; p < end;) {
        const char *nl = strchr(p, '\n');
        char line[LINE_LEN];
        snprintf(line, sizeof line, "%.*s", (int)(nl - p), p);
        p = nl + 1;
        char *w[8];
        int bad = 0, k = ho_split_words(line, w, 8, &bad);
        if (k == 5 && strcmp(w[0], "need") == 0) {
            snprintf(deb + strlen(deb), n - strlen(deb), "%s%s", found ? " " : "", w[3]);
            snprintf(brew + strlen(brew), n - strlen(brew), "%s%s", found ? " " : "", w[4]);
            found++;
        }
        for (int i = 0; i < k; i++)
            free(w[i]);
    }
    ck_assert_msg(found >= 4, ".ci/deps.sh: only %zu packages in the need list", found);
    free(text);
}

/* The number written just before the first occurrence of suffix in text; -1 when the
 * suffix is absent or no number precedes it. */
static long number_before(const char *text, const char *suffix)
{
    const char *p = strstr(text, suffix);
    if (!p)
        return -1;
    const char *q = p;
    while (q > text && q[-1] >= '0' && q[-1] <= '9')
        q--;
    return q == p ? -1 : strtol(q, NULL, 10);
}

START_TEST(the_first_step_is_the_same_on_every_first_page)
{
    char deb[LIST_LEN], brew[LIST_LEN], want[LIST_LEN + 64];
    deps_packages(deb, brew, sizeof deb);
    long seconds = -1, minutes = -1;
    for (size_t i = 0; i < N_PAGES; i++) {
        const char *path = pages[i].path;
        char *text = ho_read_file(path);
        ck_assert_msg(text != NULL, "cannot read %s", path);
        ck_assert_msg(sh_block_has(text, "make demo") && sh_block_has(text, "make check"),
                      "%s: no ```sh block with the lines 'make demo' and 'make check'", path);
        ck_assert_msg(strstr(text, "`make web`"), "%s does not name `make web`", path);
        snprintf(want, sizeof want, "`sudo apt-get install %s`", deb);
        ck_assert_msg(strstr(text, want), "%s does not give %s (the packages of .ci/deps.sh)",
                      path, want);
        snprintf(want, sizeof want, "`brew install %s`", brew);
        ck_assert_msg(strstr(text, want), "%s does not give %s (the packages of .ci/deps.sh)",
                      path, want);
        /* how long make demo takes, and the processor time measured */
        const int zh = pages[i].zh;
        const long m = number_before(text, zh ? " 分钟（实测：含编译共用处理器时间 "
                                              : " minutes on two cores (measured: ");
        const long s = number_before(text, zh ? " 秒，由两个核分担" : " s of processor time");
        ck_assert_msg(m > 0 && s > 0, "%s does not say how long make demo takes (%s)", path,
                      zh ? "约需 M 分钟（实测：含编译共用处理器时间 S 秒，由两个核分担）"
                         : "about M minutes on two cores (measured: S s of processor time");
        if (seconds < 0) {
            seconds = s;
            minutes = m;
        }
        ck_assert_msg(s == seconds && m == minutes, "%s: %ld minutes, %ld s; %s: %ld, %ld",
                      path, m, s, pages[0].path, minutes, seconds);
        ck_assert_msg(m * 60 + 30 >= s / 2 && m * 60 - 30 <= s,
                      "%s: %ld s of processor time on two cores cannot take %ld minutes",
                      path, s, m);
        free(text);
    }
}
END_TEST

/* Reads a time at p into seconds: "2 min 40 s", "2 min" or "40 s" (en); "2 分 40 秒",
 * "2 分钟" or "40 秒" (zh). Returns the number of bytes read, 0 when p holds no such
 * time. */
static size_t read_time(const char *p, int zh, long *seconds)
{
    const char *min = zh ? " 分 " : " min ", *sec = zh ? " 秒" : " s";
    const char *whole = zh ? " 分钟" : " min"; /* whole minutes, no seconds */
    char *end;
    long a = strtol(p, &end, 10);
    if (end == p || a < 0)
        return 0;
    if (strncmp(end, min, strlen(min)) == 0 && end[strlen(min)] >= '0' &&
        end[strlen(min)] <= '9') {
        const char *q = end + strlen(min);
        long b = strtol(q, &end, 10);
        if (strncmp(end, sec, strlen(sec)) != 0 || b >= 60)
            return 0;
        *seconds = a * 60 + b;
        return (size_t)(end + strlen(sec) - p);
    }
    if (strncmp(end, whole, strlen(whole)) == 0) {
        *seconds = a * 60;
        return (size_t)(end + strlen(whole) - p);
    }
    if (strncmp(end, sec, strlen(sec)) == 0) {
        *seconds = a;
        return (size_t)(end + strlen(sec) - p);
    }
    return 0;
}

/* The measured time a handout states (after its marker), in seconds; -1 when none. */
static long handout_time(const char *path, int zh, char *as_written, size_t n)
{
    static const char *const marker[2] = {"Its commands take ", "实测用时 "};
    char *text = ho_read_file(path);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    const char *p = strstr(text, marker[zh]);
    long s = -1;
    size_t len = p ? read_time(p + strlen(marker[zh]), zh, &s) : 0;
    const char *after = p ? p + strlen(marker[zh]) + len : NULL;
    if (len && !(zh ? strncmp(after, "。", strlen("。")) == 0
                    : strncmp(after, " on a two-core machine (measured)", 33) == 0))
        s = -1;
    if (s >= 0)
        snprintf(as_written, n, "%.*s", (int)len, p + strlen(marker[zh]));
    free(text);
    return s;
}

START_TEST(each_lab_states_its_measured_time_in_both_languages_and_the_tables)
{
    char en[32][PATH_LEN];
    const size_t n = ho_find_files("docs/labs/[0-9][0-9]-*.md", en, 32);
    ck_assert_uint_ge(n, 8);
    char *table[2] = {ho_read_file("docs/labs/README.md"), ho_read_file("docs/zh/labs/README.md")};
    ck_assert(table[0] && table[1]);
    for (size_t i = 0; i < n; i++) {
        const char *name = strrchr(en[i], '/') + 1;
        char zh[PATH_LEN + 16], written[2][64], row[32], cell[80];
        snprintf(zh, sizeof zh, "docs/zh/labs/%s", name);
        const long s_en = handout_time(en[i], 0, written[0], sizeof written[0]);
        const long s_zh = handout_time(zh, 1, written[1], sizeof written[1]);
        ck_assert_msg(s_en > 0, "%s: no 'Its commands take T on a two-core machine "
                      "(measured)'", en[i]);
        ck_assert_msg(s_zh > 0, "%s: no '实测用时 T。'", zh);
        ck_assert_msg(s_en == s_zh, "%s says %ld s, %s %ld s", en[i], s_en, zh, s_zh);
        for (int k = 0; k < 2; k++) {
            snprintf(row, sizeof row, "| [%.2s](", name);
            const char *r = strstr(table[k], row);
            ck_assert_msg(r != NULL, "the labs table (%s) has no row for lab %.2s",
                          k ? "zh" : "en", name);
            const char *eol = strchr(r, '\n');
            snprintf(cell, sizeof cell, "| %s |", written[k]);
            const char *c = strstr(r, cell);
            ck_assert_msg(c && (!eol || c < eol), "the labs table (%s), row %.2s: no cell '%s'",
                          k ? "zh" : "en", name, cell);
        }
    }
    free(table[0]);
    free(table[1]);
}
END_TEST

Suite *make_firststep_suite(void)
{
    Suite *s = suite_create("firststep");
    TCase *tc = tcase_create("pages");
    tcase_add_test(tc, the_first_step_is_the_same_on_every_first_page);
    tcase_add_test(tc, each_lab_states_its_measured_time_in_both_languages_and_the_tables);
    suite_add_tcase(s, tc);
    return s;
}
