/* rundir_text.c — is a cell text a person can read, and how to print one that is not
 * (see rundir.h).
 *
 * Design. A run directory's files are UTF-8 text, one line per record, tab-separated:
 * a cell holds no tab, newline or other control character. What people or tools put in
 * them can be anything, so each character is decoded by the rules of UTF-8 (RFC 3629:
 * no overlong form, no surrogate, nothing above U+10FFFF) and refused when it is a
 * control character (C0, DEL, C1). A value shown in a message goes through
 * rundir_printable, so that one message stays one line and the terminal gets no escape
 * sequence from a file.
 */
#include "rundir.h"

#include <stdio.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s that is not a control character, or 0. */
static size_t text_char(const unsigned char *s)
{
    const unsigned c = s[0];
    if (c < 0x20 || c == 0x7f)
        return 0; /* C0 controls (tab and newline included: never inside a cell) and DEL */
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned long cp;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, cp = c & 0x07;
    else
        return 0; /* a continuation byte, an overlong lead (C0, C1) or beyond F4 */
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const unsigned long least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0; /* overlong, beyond Unicode, a surrogate */
    if (cp >= 0x80 && cp <= 0x9f)
        return 0; /* C1 controls */
    return len;
}

int rundir_is_text(const char *s, size_t *bad)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (p[i]) {
        size_t k = text_char(p + i);
        if (!k) {
            if (bad)
                *bad = i;
            return 0;
        }
        i += k;
    }
    return 1;
}

const char *rundir_printable(const char *s, char *buf, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    if (n < 8) {
        if (n)
            buf[0] = '\0';
        return buf;
    }
    while (*p) {
        size_t k = text_char(p), room = k ? k : 4;
        if (o + room + 4 > n) { /* no room for this piece and the "..." that ends it */
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        if (k) {
            memcpy(buf + o, p, k);
            o += k;
            p += k;
        } else {
            snprintf(buf + o, n - o, "\\x%02x", *p);
            o += 4;
            p++;
        }
    }
    buf[o] = '\0';
    return buf;
}
