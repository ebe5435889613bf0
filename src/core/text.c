/* Text hygiene in one place: UTF-8 validation and repair (an invalid byte becomes U+FFFD, one
 * per byte, so the damage stays visible), cuts on character boundaries, and escaping for the
 * terminal, where C0, C1 and bidirectional controls could move the cursor, set the clipboard
 * (OSC 52) or reorder what the reader sees. */
#include "sc_text.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* The code point of the valid sequence of len bytes at s. */
static uint32_t decode(const unsigned char *s, size_t len)
{
    if (len == 1)
        return s[0];
    uint32_t cp = s[0] & (0x7fu >> len);
    for (size_t i = 1; i < len; i++)
        cp = (cp << 6) | (s[i] & 0x3fu);
    return cp;
}

size_t sc_utf8_seq_len(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t len;
    uint32_t min;
    if (s[0] > 0 && s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        len = 2, min = 0x80;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        len = 3, min = 0x800;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        len = 4, min = 0x10000;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    uint32_t cp = decode(s, len);
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
        return 0; /* surrogates are not characters; XML 1.0 (JUnit) forbids U+FFFE and U+FFFF */
    return len;
}

bool sc_utf8_valid(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t len = sc_utf8_seq_len(s + i, n - i);
        if (len == 0)
            return false;
        i += len;
    }
    return true;
}

char *sc_utf8_clean(const char *s, size_t n)
{
    char *out = malloc(n * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t len = sc_utf8_seq_len(s + i, n - i);
        if (len == 0) {
            memcpy(out + o, REPLACEMENT, 3);
            o += 3;
            i++;
            continue;
        }
        memcpy(out + o, s + i, len);
        o += len;
        i += len;
    }
    out[o] = '\0';
    return out;
}

/* Where the character that holds byte pos begins, when pos is inside a valid sequence. */
static size_t char_start(const char *s, size_t n, size_t pos)
{
    size_t lead = pos;
    while (lead > 0 && pos - lead < 3 && ((unsigned char)s[lead] & 0xc0) == 0x80)
        lead--;
    size_t len = sc_utf8_seq_len(s + lead, n - lead);
    return len && lead + len > pos ? lead : pos;
}

size_t sc_utf8_prefix(const char *s, size_t n, size_t max)
{
    return n <= max ? n : char_start(s, n, max);
}

size_t sc_utf8_suffix_start(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return 0;
    size_t start = n - max, lead = char_start(s, n, start);
    return lead == start ? start : lead + sc_utf8_seq_len(s + lead, n - lead);
}

int sc_utf8_prec(const char *s, int max)
{
    if (!s || max <= 0)
        return 0;
    size_t n = strnlen(s, (size_t)max + 4);
    return (int)sc_utf8_prefix(s, n, (size_t)max);
}

void sc_text_copy(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src), keep = sc_utf8_prefix(src, n, size - 1);
    memmove(dst, src, keep);
    dst[keep] = '\0';
}

/* True for the code points a terminal must not receive raw. */
static bool needs_escape(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
           (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

static void print_byte(FILE *out, unsigned char c)
{
    if (c == '\n')
        fputs("\\n", out);
    else if (c == '\t')
        fputs("\\t", out);
    else if (c < 0x20 || c >= 0x7f)
        fprintf(out, "\\x%02x", c);
    else
        fputc(c, out);
}

void sc_term_print(FILE *out, const char *s, size_t max)
{
    if (!s)
        return;
    size_t n = strnlen(s, max);
    for (size_t i = 0; i < n;) {
        size_t len = sc_utf8_seq_len(s + i, strnlen(s + i, 4));
        if (len <= 1) {
            print_byte(out, (unsigned char)s[i++]);
            continue;
        }
        if (i + len > n)
            break; /* the cut would fall inside this character */
        uint32_t cp = decode((const unsigned char *)s + i, len);
        if (needs_escape(cp))
            fprintf(out, "\\u%04x", (unsigned)cp);
        else
            fwrite(s + i, 1, len, out);
        i += len;
    }
}

/* One conversion of sc_term_printf at fmt (after the '%'); returns the characters it used. */
static size_t term_conversion(FILE *out, const char *fmt, va_list *ap)
{
    if (fmt[0] == 's') {
        sc_term_print(out, va_arg(*ap, const char *), (size_t)-1);
        return 1;
    }
    if (strncmp(fmt, ".*s", 3) == 0) {
        int max = va_arg(*ap, int);
        sc_term_print(out, va_arg(*ap, const char *), max > 0 ? (size_t)max : 0);
        return 3;
    }
    if (fmt[0] == 'c') {
        char c[2] = {(char)va_arg(*ap, int), '\0'};
        sc_term_print(out, c, 1);
        return 1;
    }
    if (fmt[0] == 'd') {
        fprintf(out, "%d", va_arg(*ap, int));
        return 1;
    }
    fputc('%', out); /* %% and anything not understood */
    return fmt[0] == '%' ? 1 : 0;
}

void sc_term_printf(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    for (const char *p = fmt; *p;) {
        const char *pct = strchr(p, '%');
        size_t n = pct ? (size_t)(pct - p) : strlen(p);
        fwrite(p, 1, n, out);
        if (!pct)
            break;
        p = pct + 1;
        p += term_conversion(out, p, &ap);
    }
    va_end(ap);
}
