/* worksheet.h — the printable worksheets: what the reader (worksheet.c) takes from a
 * handout, its sheet.txt and its README, and the two writers (worksheet_write.c) that
 * make a Markdown and an HTML page of it. The design is in worksheet.c. Prefix: ws_. */
#ifndef ATTNLAB_WORKSHEET_H
#define ATTNLAB_WORKSHEET_H

#include <stddef.h>

#define MAX_WORDS 64
#define MAX_TABLES 8
#define MAX_ROWS 16
#define MAX_CELLS 12
#define PATH_LEN 1024

/* ---- the sheet's own words and tables (DIR/worksheets/sheet.txt) -------------------- */

/* A blank results table: a caption, a header and the labels of its rows; a cell written
 * in the file is printed, "" is a blank to fill in. */
typedef struct table {
    char *caption;
    char *head[MAX_CELLS];
    size_t ncols;
    const char *cell[MAX_ROWS][MAX_CELLS];
    size_t nrows;
} table;

typedef struct sheet {
    char *name[MAX_WORDS], *text[MAX_WORDS]; /* word NAME TEXT */
    size_t nwords;
    table tables[MAX_TABLES]; /* the lab's */
    size_t ntables;
} sheet;

/* ---- what is taken from the handout ------------------------------------------------- */

/* A run of the handout's lines that the sheet shows as one thing. */
typedef enum { B_PARA, B_ITEM, B_CODE, B_HEADING } block_kind;

typedef struct block {
    block_kind kind;
    char **line; /* the handout's lines (for B_CODE without the fences) */
    size_t n;
    const char *lang; /* B_CODE: the fence's language */
    int number;       /* B_ITEM: its number */
} block;

typedef struct lab {
    char *title;    /* the handout's title, without "# " */
    char time[256]; /* the first sentence of the italic line under it */
    block predict[64], commands[96], questions[32];
    size_t npredict, ncommands, nquestions;
    char *page, *cmdline; /* the README's cells for the lab */
} lab;

/* Prints "worksheet: MESSAGE" on standard error and exits with status. */
void ws_die(int status, const char *fmt, ...);

/* The sheet's word name (exits, naming it, when sheet.txt lacks it). */
const char *ws_word(const sheet *s, const char *name);

/* Write the sheet of l to standard output, as Markdown or as HTML; handout is the
 * handout's path, for the links back to it. */
void ws_write_md(const lab *l, const sheet *s, const char *handout);
void ws_write_html(const lab *l, const sheet *s, const char *handout);

#endif
