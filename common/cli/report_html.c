/* report_html.c — the pieces of HTML the page is made of that know nothing of the page:
 * text escaped, a table, a group's name as a command line, a PNG inline (see
 * report_html.h).
 *
 * Design. Whatever a file of a run holds reaches the page through report_html_text, so
 * every cell is escaped once, here. A PNG is read whole and written as a data: URI, its
 * size taken from its IHDR chunk, so the page needs no file beside it.
 */
#include "report_html.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/afile.h"
#include "../core/tsv.h"

void report_html_text(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
}

void report_html_table(FILE *f, const tsv *t)
{
    fputs("<table>\n<tr>", f);
    for (size_t c = 0; c < t->cols; c++) {
        fputs("<th>", f);
        report_html_text(f, t->cell[c]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (size_t r = 0; r < t->rows; r++) {
        fputs("<tr>", f);
        for (size_t c = 0; c < t->cols; c++) {
            fputs("<td>", f);
            report_html_text(f, tsv_get(t, r, c));
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

void report_html_group(FILE *f, const char *name)
{
    const char *colon = strchr(name, ':');
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s", colon ? (int)(colon - name) : (int)strlen(name), name);
    report_html_text(f, buf);
    for (const char *p = colon; p && *p;) {
        p++; /* past ':' or ',' */
        size_t l = strcspn(p, ","), k = strcspn(p, "=");
        fputs(" --", f);
        for (size_t i = 0; i < l; i++) {
            const char c[2] = {i < k && p[i] == '_' ? '-' : i == k ? ' ' : p[i], '\0'};
            report_html_text(f, c);
        }
        p += l;
    }
}


/* Writes len bytes as base64 (RFC 4648, with padding). */
static void base64(FILE *f, const unsigned char *b, size_t len)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < len; i += 3) {
        const unsigned long v = (unsigned long)b[i] << 16 |
                                (i + 1 < len ? (unsigned long)b[i + 1] << 8 : 0) |
                                (i + 2 < len ? (unsigned long)b[i + 2] : 0);
        fputc(abc[v >> 18 & 63], f);
        fputc(abc[v >> 12 & 63], f);
        fputc(i + 1 < len ? abc[v >> 6 & 63] : '=', f);
        fputc(i + 2 < len ? abc[v & 63] : '=', f);
    }
}

/* The big-endian 32-bit number at p. */
static unsigned long be32(const unsigned char *p)
{
    return (unsigned long)p[0] << 24 | (unsigned long)p[1] << 16 | (unsigned long)p[2] << 8 |
           (unsigned long)p[3];
}

void report_html_image(FILE *f, const char *out, const char *name, const char *alt, int heat)
{
    char rel[160], path[AFILE_PATH_MAX];
    size_t len = 0;
    snprintf(rel, sizeof rel, "figures/%s.png", name);
    unsigned char *png = afile_join(path, sizeof path, out, rel) == 0
                             ? (unsigned char *)afile_read(path, TSV_MAX_BYTES, &len)
                             : NULL;
    /* the signature, then IHDR: length, "IHDR", width, height */
    if (png && len > 24 && memcmp(png + 1, "PNG", 3) == 0 && memcmp(png + 12, "IHDR", 4) == 0) {
        fprintf(f, "<div class=\"fig\"><img%s width=\"%lu\" height=\"%lu\" alt=\"",
                heat ? " class=\"heat\"" : "", be32(png + 16), be32(png + 20));
        report_html_text(f, alt);
        fputs("\" src=\"data:image/png;base64,", f);
        base64(f, png, len);
        fputs("\"></div>\n", f);
    }
    free(png);
}
