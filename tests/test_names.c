/* test_names.c — the layers of the design hold: the harness in common/ names no model.
 *
 * common/ reaches a model only through the ops table of common/core/model.h and the data the
 * registry (attnlab.c) gives; a model's name, its folder's prefix or its cell written
 * into common/ is knowledge of one model that the next model would not find. The case
 * reads every .c and .h below common/ (folders included, whatever they are later split
 * into) and fails at each whole word, in any case, that is a registered model's name or
 * one of the models' prefixes, naming the file and line.
 *
 * Allowed: the values of the `cell` setting, which are the names of recurrent cells
 * (config.c's list of choices, and an example of such a value in a comment); a setting's
 * accepted values are written once, in the settings table, before any model reads them. */
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/core/model.h"
#include "testreport.h"
#include "testutil.h"

/* The words of the models' folders that are not registry names: file prefixes and the
 * recurrent cell a model is built from. */
static const char *const prefixes[] = {"tfm", "rnnattn", "gru"};

/* Text around a hit that makes it a value of the cell setting, not a model. */
static const char *const allowed[] = {"\"gru,lstm\"", "\"cell-lstm\""};

/* Is the word text[at, at+len) inside one of the allowed snippets? */
static int is_allowed(const char *text, size_t at, size_t len)
{
    for (size_t k = 0; k < sizeof allowed / sizeof allowed[0]; k++)
        for (const char *p = text; (p = strstr(p, allowed[k])) != NULL; p++) {
            const size_t from = (size_t)(p - text), to = from + strlen(allowed[k]);
            if (at >= from && at + len <= to)
                return 1;
        }
    return 0;
}

/* Is word (length len) a model's name or prefix, in any case? */
static int is_model_word(const char *word, size_t len)
{
    for (size_t k = 0; model_registry[k]; k++)
        if (strlen(model_registry[k]->name) == len &&
            strncasecmp(model_registry[k]->name, word, len) == 0)
            return 1;
    for (size_t k = 0; k < sizeof prefixes / sizeof prefixes[0]; k++)
        if (strlen(prefixes[k]) == len && strncasecmp(prefixes[k], word, len) == 0)
            return 1;
    return 0;
}

static int word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Appends to found (room n) "path:line: word" for every model word in the file path;
 * returns how many. */
static size_t scan_file(const char *path, const char *shown, char *found, size_t n)
{
    size_t hits = 0, len = 0;
    char *text = ru_slurp(path, &len);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    size_t line = 1;
    for (size_t i = 0; i < len;) {
        if (text[i] == '\n')
            line++;
        if (!word_char(text[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < len && word_char(text[j]))
            j++;
        if (is_model_word(text + i, j - i) && !is_allowed(text, i, j - i)) {
            hits++;
            const size_t at = strlen(found);
            snprintf(found + at, n - at, "\n  %s:%zu: %.*s", shown, line, (int)(j - i),
                     text + i);
        }
        i = j;
    }
    free(text);
    return hits;
}

/* Scans every .c and .h below dir (rel: its name as shown). */
static size_t scan_dir(const char *dir, const char *rel, char *found, size_t n, size_t *files)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    size_t hits = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[RU_PATH], shown[RU_PATH];
        ru_fmt(path, sizeof path, "%s/%s", dir, e->d_name);
        ru_fmt(shown, sizeof shown, "%s/%s", rel, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        const size_t l = strlen(e->d_name);
        if (S_ISDIR(st.st_mode))
            hits += scan_dir(path, shown, found, n, files);
        else if (l > 2 && (strcmp(e->d_name + l - 2, ".c") == 0 ||
                           strcmp(e->d_name + l - 2, ".h") == 0)) {
            hits += scan_file(path, shown, found, n);
            (*files)++;
        }
    }
    closedir(d);
    return hits;
}

START_TEST(common_names_no_model)
{
    char dir[RU_PATH];
    static char found[8192];
    found[0] = '\0';
    ru_fmt(dir, sizeof dir, "%s/common", ru_src_root());
    size_t files = 0;
    const size_t hits = scan_dir(dir, "common", found, sizeof found, &files);
    ck_assert_msg(files > 20, "only %zu source files under %s", files, dir);
    ck_assert_msg(hits == 0, "common/ names a model %zu time(s) (reach it through its ops "
                  "or the registry instead):%s", hits, found);
}
END_TEST

Suite *make_names_suite(void)
{
    Suite *s = suite_create("names");
    TCase *tc = tcase_create("common");
    tcase_add_test(tc, common_names_no_model);
    suite_add_tcase(s, tc);
    return s;
}
