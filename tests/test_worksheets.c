/* test_worksheets.c — the printable worksheets stay in step with the lab handouts.
 *
 * docs/labs/worksheets/NN-NAME.md and .html (and the same in docs/zh/labs/worksheets/) are
 * written by `make worksheets` (docs/labs/worksheets/worksheet.c) from the handout
 * NN-NAME.md beside them. What is checked, for every handout in both languages:
 *   - both sheets exist and are what the writer makes of the handout now (a handout
 *     edited without `make worksheets` fails here, with the command to run);
 *   - every line of the handout's ```sh blocks is on both sheets, as written, and every
 *     numbered question of its questions section (its words, whatever the line breaks
 *     and Markdown marks), read here from the handout independently of the writer;
 *   - each sheet has a blank results table and says what the browser page can do for
 *     the lab: the lab's row of the table in the labs README;
 *   - the writer refuses what it cannot make a sheet of, with a message and status 1
 *     (a handout without questions, a lab without a table) or 2 (usage);
 *   - printed with Chromium to A4, every HTML sheet is one page (slow; skipped, with a
 *     line, when no Chromium is found: $CHROMIUM, chromium, chromium-browser,
 *     google-chrome).
 * The writer is the program $ATTNLAB_WORKSHEET names, or `worksheet` beside the program
 * the tests run (the Makefile builds it with the tests). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testhandout.h"
#include "testutil.h"

#define MAX_HANDOUTS 32

static char handouts[MAX_HANDOUTS][PATH_LEN];
static size_t n_handouts;

/* The writer's path: ATTNLAB_WORKSHEET, or worksheet beside the program under test. */
static const char *writer(void)
{
    static char path[PATH_LEN];
    const char *p = getenv("ATTNLAB_WORKSHEET");
    if (p && *p)
        return p;
    const char *prog = ho_program();
    const char *slash = strrchr(prog, '/');
    snprintf(path, sizeof path, "%.*sworksheet", slash ? (int)(slash - prog + 1) : 0,
             slash ? prog : "build/");
    return path;
}

/* Runs the shell command cmd; its standard output whole into *out (free it) and its
 * exit status returned (-1 after a signal). */
static int run_capture(const char *sh, char **out)
{
    FILE *p = popen(sh, "r");
    ck_assert_msg(p != NULL, "cannot run %s", sh);
    size_t cap = 1 << 16, len = 0;
    char *s = malloc(cap);
    ck_assert_ptr_nonnull(s);
    for (size_t got; (got = fread(s + len, 1, cap - len - 1, p)) > 0;) {
        len += got;
        if (cap - len < 2) {
            s = realloc(s, cap *= 2);
            ck_assert_ptr_nonnull(s);
        }
    }
    s[len] = '\0';
    const int st = pclose(p);
    *out = s;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The sheet of a handout (DIR/NN-NAME.md → DIR/worksheets/NN-NAME.ext) into path. */
static void sheet_path(const char *hpath, const char *ext, char *path)
{
    const char *slash = strrchr(hpath, '/');
    const char *base = slash ? slash + 1 : hpath;
    snprintf(path, PATH_LEN, "%.*s/worksheets/%.*s.%s", (int)(slash ? slash - hpath : 1),
             slash ? hpath : ".", (int)(strlen(base) - 3), base, ext);
}

/* s without its blanks (spaces, tabs, newlines), and for Markdown also without the marks
 * ` and *: the words, whatever the line breaks and the markup (a new string). */
static char *words_of(const char *s, int drop_marks)
{
    char *out = malloc(strlen(s) + 1), *o = out;
    ck_assert_ptr_nonnull(out);
    for (; *s; s++)
        if (!strchr(" \t\r\n", *s) && !(drop_marks && (*s == '`' || *s == '*')))
            *o++ = *s;
    *o = '\0';
    return out;
}

/* The text of an HTML page: tags dropped, the four entities the writer uses undone, the
 * (a new string); keep_tags leaves the tags in. */
static char *html_text(const char *html, int keep_tags)
{
    static const char *const ent[][2] = {
        {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}};
    char *out = malloc(strlen(html) + 1), *o = out;
    ck_assert_ptr_nonnull(out);
    for (const char *p = html; *p;) {
        if (*p == '<' && !keep_tags) {
            const char *end = strchr(p, '>');
            p = end ? end + 1 : p + 1;
            continue;
        }
        size_t k = 0;
        while (k < 4 && strncmp(p, ent[k][0], strlen(ent[k][0])) != 0)
            k++;
        if (k < 4) {
            *o++ = ent[k][1][0];
            p += strlen(ent[k][0]);
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    return out;
}

/* The numbered questions of a handout: the items under its heading "## Questions" or
 * "## 问题", each with its indented continuation lines, '\n'-separated into *items
 * (free it); returns their number. */
static size_t questions_of(const char *text, char ***items)
{
    static char *found[64];
    size_t n = 0;
    const char *sec = strstr(text, "\n## Questions\n");
    if (!sec)
        sec = strstr(text, "\n## 问题\n");
    ck_assert_msg(sec != NULL, "no questions section");
    sec = strchr(sec + 1, '\n') + 1;
    const char *end = strstr(sec, "\n## ");
    if (!end)
        end = sec + strlen(sec);
    for (const char *p = sec; p < end;) {
        const char *nl = strchr(p, '\n');
        if (!nl || nl > end)
            nl = end;
        if (*p >= '0' && *p <= '9') {
            ck_assert_int_lt(n, 64);
            /* the item runs on over the lines that start with a blank */
            const char *stop = nl;
            while (stop < end && stop[1] == ' ')
                stop = strchr(stop + 1, '\n') ? strchr(stop + 1, '\n') : end;
            found[n] = strndup(p, (size_t)(stop - p));
            ck_assert_ptr_nonnull(found[n]);
            n++;
            nl = stop;
        }
        p = nl + 1;
    }
    *items = found;
    return n;
}

/* The cells 2 and 3 of the lab's row "| NN | PAGE | CLI |" in the README beside the
 * handout, into page and cli. */
static void page_row(const char *hpath, const char *lab, char *page, char *cli, size_t n)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%.*s/README.md", (int)(strrchr(hpath, '/') - hpath), hpath);
    char *text = ho_read_file(path);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    char head[16];
    snprintf(head, sizeof head, "| %s | ", lab);
    int found = 0;
    for (char *line = text, *next; line && *line && !found; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        int bars = 0;
        for (const char *c = line; *c; c++)
            bars += *c == '|';
        if (bars != 4 || strncmp(line, head, strlen(head)) != 0)
            continue;
        const char *a = line + strlen(head), *b = strchr(a, '|');
        snprintf(page, n, "%.*s", (int)(b - a - 1), a);
        a = b + 2;
        b = strchr(a, '|');
        snprintf(cli, n, "%.*s", (int)(b - a - 1), a);
        found = 1;
    }
    free(text);
    ck_assert_msg(found, "%s has no row \"| %s | PAGE | COMMAND LINE |\"", path, lab);
}

/* ---- the sheets hold the handouts --------------------------------------------------- */

START_TEST(every_lab_has_sheets_in_both_languages)
{
    size_t en = 0, zh = 0;
    for (size_t i = 0; i < n_handouts; i++) {
        char md[PATH_LEN], html[PATH_LEN];
        sheet_path(handouts[i], "md", md);
        sheet_path(handouts[i], "html", html);
        ck_assert_msg(ho_exists(md) && ho_exists(html),
                      "%s has no worksheet %s and %s: run "
                      "make worksheets",
                      handouts[i], md, html);
        *(strstr(handouts[i], "/zh/") ? &zh : &en) += 1;
    }
    ck_assert_msg(en >= 8 && en == zh,
                  "%zu English and %zu Chinese handouts: every lab needs "
                  "both",
                  en, zh);
}
END_TEST

START_TEST(sheet_holds_commands_questions_table_and_page)
{
    const char *hpath = handouts[_i];
    char mdpath[PATH_LEN], htmlpath[PATH_LEN];
    sheet_path(hpath, "md", mdpath);
    sheet_path(hpath, "html", htmlpath);
    char *md = ho_read_file(mdpath), *html = ho_read_file(htmlpath);
    ck_assert_msg(md && html, "cannot read %s or %s: run make worksheets", mdpath, htmlpath);
    char *html_raw = html_text(html, 1), *html_words = html_text(html, 0);
    char *md_w = words_of(md, 0), *html_w = words_of(html_words, 1);

    /* every line of its sh blocks, as written */
    static handout h;
    handout_read(&h, hpath);
    size_t ncmd = 0;
    for (char *line = h.sh, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        ck_assert_msg(strstr(md, line) != NULL, "%s lacks the command of %s: %s", mdpath, hpath,
                      line);
        ck_assert_msg(strstr(html_raw, line) != NULL, "%s lacks the command of %s: %s",
                      htmlpath, hpath, line);
        ncmd++;
    }
    ck_assert_msg(ncmd > 0, "%s: no command read", hpath);

    /* every numbered question */
    char **q;
    const size_t nq = questions_of(h.text, &q);
    ck_assert_msg(nq >= 4, "%s: only %zu questions read", hpath, nq);
    for (size_t k = 0; k < nq; k++) {
        char *w = words_of(q[k], 0), *wm = words_of(q[k], 1);
        ck_assert_msg(strstr(md_w, w) != NULL, "%s lacks question %zu of %s", mdpath, k + 1,
                      hpath);
        /* on the HTML sheet the item's number is the list's, not in its text */
        const char *dot = strchr(wm, '.');
        ck_assert_msg(strstr(html_w, dot + 1) != NULL, "%s lacks question %zu of %s", htmlpath,
                      k + 1, hpath);
        free(w);
        free(wm);
        free(q[k]);
    }

    /* a blank results table, and the browser page's row of the README */
    ck_assert_msg(strstr(md, "|     |") != NULL, "%s has no blank table cell", mdpath);
    ck_assert_msg(strstr(html, "<td></td>") != NULL, "%s has no blank table cell", htmlpath);
    const char *base = strrchr(hpath, '/') + 1;
    char lab[3] = {base[0], base[1], '\0'}, page[512], cli[512];
    page_row(hpath, lab, page, cli, sizeof page);
    char *pw = words_of(page, 1), *cw = words_of(cli, 1);
    ck_assert_msg(strstr(md, page) && strstr(md, cli),
                  "%s does not say what the browser page "
                  "can do (the README's row of lab %s)",
                  mdpath, lab);
    ck_assert_msg(strstr(html_w, pw) && strstr(html_w, cw),
                  "%s does not say what the browser "
                  "page can do (the README's row of lab %s)",
                  htmlpath, lab);
    free(pw);
    free(cw);
    handout_free(&h);
    free(md_w);
    free(html_w);
    free(html_raw);
    free(html_words);
    free(md);
    free(html);
}
END_TEST

/* ---- the committed sheets are what the writer makes --------------------------------- */

START_TEST(sheets_are_current)
{
    const char *hpath = handouts[_i];
    static const char *const ext[] = {"md", "html"};
    for (size_t k = 0; k < 2; k++) {
        char sh[3 * PATH_LEN], path[PATH_LEN];
        snprintf(sh, sizeof sh, "'%s' %s '%s'", writer(), ext[k], hpath);
        char *made;
        const int st = run_capture(sh, &made);
        ck_assert_msg(st == 0, "%s: status %d (is the writer built? make %s)", sh, st,
                      writer());
        sheet_path(hpath, ext[k], path);
        char *kept = ho_read_file(path);
        ck_assert_msg(kept && strcmp(kept, made) == 0,
                      "%s is not what the writer makes of %s now: run make worksheets", path,
                      hpath);
        free(kept);
        free(made);
    }
}
END_TEST

/* Runs the writer with args (shell words) in dir; its status, standard error into err. */
static int writer_in(const char *dir, const char *args, char *err, size_t n)
{
    char sh[4 * PATH_LEN], log[PATH_LEN + 16], *out;
    char abs[PATH_LEN];
    const char *w = writer();
    if (w[0] != '/') {
        ck_assert_ptr_nonnull(getcwd(abs, sizeof abs));
        strncat(abs, "/", sizeof abs - strlen(abs) - 1);
        strncat(abs, w, sizeof abs - strlen(abs) - 1);
        w = abs;
    }
    snprintf(log, sizeof log, "%s/err.txt", dir);
    snprintf(sh, sizeof sh, "cd '%s' && '%s' %s 2>'%s'", dir, w, args, log);
    const int st = run_capture(sh, &out);
    free(out);
    char *e = ho_read_file(log);
    snprintf(err, n, "%s", e ? e : "");
    free(e);
    return st;
}

START_TEST(writer_refuses_what_it_cannot_use)
{
    char dir[] = "/tmp/attnlab-worksheet-XXXXXX", err[1024], sh[PATH_LEN * 2];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(sh, sizeof sh,
             "mkdir -p '%s/labs/worksheets' && cp docs/labs/README.md "
             "docs/labs/01-lstm-memory.md '%s/labs/' && cp docs/labs/worksheets/sheet.txt "
             "'%s/labs/worksheets/'",
             dir, dir, dir);
    ck_assert_int_eq(system(sh), 0);
    /* usage */
    ck_assert_int_eq(writer_in(dir, "", err, sizeof err), 2);
    ck_assert_msg(strstr(err, "usage") != NULL, "no usage line: %s", err);
    ck_assert_int_eq(writer_in(dir, "pdf labs/01-lstm-memory.md", err, sizeof err), 2);
    ck_assert_int_eq(writer_in(dir, "md labs/README.md", err, sizeof err), 2);
    ck_assert_msg(strstr(err, "NN-NAME.md") != NULL, "the name rule is not said: %s", err);
    /* the copy as it is makes a sheet */
    ck_assert_int_eq(writer_in(dir, "md labs/01-lstm-memory.md > /dev/null", err, sizeof err),
                     0);
    /* a lab without a table */
    snprintf(sh, sizeof sh, "cp '%s/labs/01-lstm-memory.md' '%s/labs/99-extra.md'", dir, dir);
    ck_assert_int_eq(system(sh), 0);
    ck_assert_int_eq(writer_in(dir, "md labs/99-extra.md", err, sizeof err), 1);
    ck_assert_msg(strstr(err, "no results table for lab 99") != NULL, "%s", err);
    /* a handout without its questions */
    snprintf(sh, sizeof sh,
             "sed -i 's/^## Questions$/## Questioning/' "
             "'%s/labs/01-lstm-memory.md'",
             dir);
    ck_assert_int_eq(system(sh), 0);
    ck_assert_int_eq(writer_in(dir, "html labs/01-lstm-memory.md", err, sizeof err), 1);
    ck_assert_msg(strstr(err, "no section \"Questions\"") != NULL, "%s", err);
    /* a README without the lab's row of the browser page */
    snprintf(sh, sizeof sh,
             "sed -i 's/^## Questioning$/## Questions/; ' "
             "'%s/labs/01-lstm-memory.md' && sed -i '/^| 01 | the LSTM/d' '%s/labs/README.md'",
             dir, dir);
    ck_assert_int_eq(system(sh), 0);
    ck_assert_int_eq(writer_in(dir, "md labs/01-lstm-memory.md", err, sizeof err), 1);
    ck_assert_msg(strstr(err, "no row \"| 01 |") != NULL, "%s", err);
    snprintf(sh, sizeof sh, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(sh), 0);
}
END_TEST

/* ---- on paper ----------------------------------------------------------------------- */

START_TEST(sheet_prints_on_one_page)
{
    const char *browser = tu_chromium();
    if (!browser) {
        printf("worksheets: no Chromium found, the sheets are not printed (set CHROMIUM)\n");
        return;
    }
    char html[PATH_LEN], abs[PATH_LEN], dir[] = "/tmp/attnlab-print-XXXXXX";
    sheet_path(handouts[_i], "html", html);
    ck_assert_ptr_nonnull(realpath(html, abs));
    ck_assert_ptr_nonnull(mkdtemp(dir));
    /* a profile of its own, so nothing of the user's is read or changed */
    char sh[4 * PATH_LEN], pdf[sizeof dir + 16];
    snprintf(pdf, sizeof pdf, "%s/sheet.pdf", dir);
    snprintf(sh, sizeof sh,
             "'%s' --headless --no-sandbox --disable-gpu --user-data-dir="
             "'%s/profile' --no-pdf-header-footer --print-to-pdf='%s' 'file://%s' "
             "> /dev/null 2>&1",
             browser, dir, pdf, abs);
    const int st = system(sh);
    /* the page tree's count, which Chromium writes uncompressed: "/Count N" */
    FILE *f = fopen(pdf, "rb");
    ck_assert_msg(f != NULL, "%s printed no PDF with %s (status %d)", html, browser, st);
    static char bytes[1 << 22];
    const size_t len = fread(bytes, 1, sizeof bytes - 1, f);
    fclose(f);
    bytes[len] = '\0';
    const char *count = NULL;
    for (size_t k = 0; k + 7 < len && !count; k++)
        if (memcmp(bytes + k, "/Count ", 7) == 0)
            count = bytes + k;
    ck_assert_msg(count != NULL, "%s: no page count in the PDF", html);
    ck_assert_msg(atoi(count + 7) == 1, "%s prints on %d A4 pages, not one", html,
                  atoi(count + 7));
    snprintf(sh, sizeof sh, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(sh), 0);
}
END_TEST

Suite *make_worksheets_suite(void)
{
    const size_t en = ho_find_files("docs/labs/[0-9][0-9]-*.md", handouts, MAX_HANDOUTS);
    n_handouts =
        en + ho_find_files("docs/zh/labs/[0-9][0-9]-*.md", handouts + en, MAX_HANDOUTS - en);
    const int n = (int)(n_handouts ? n_handouts : 1);
    Suite *s = suite_create("worksheets");
    TCase *tc = tcase_create("sheets");
    tcase_add_test(tc, every_lab_has_sheets_in_both_languages);
    tcase_add_loop_test(tc, sheet_holds_commands_questions_table_and_page, 0, n);
    tcase_add_loop_test(tc, sheets_are_current, 0, n);
    tcase_add_test(tc, writer_refuses_what_it_cannot_use);
    suite_add_tcase(s, tc);
    tc = tcase_create("print");
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, sheet_prints_on_one_page, 0, n);
    suite_add_tcase(s, tc);
    return s;
}
