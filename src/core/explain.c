/* Matching error text against the signature table and printing what covers it: a signature's
 * keys are a word pattern, a code and a message phrase; the findings' meanings come from the
 * embedded findings catalogue, so explain and docs/findings.md never disagree. */
#include "sc_explain.h"

#include <ctype.h>
#include <fnmatch.h>
#include <string.h>
#include <strings.h>

#include "sc_findings_doc.h"
#include "sc_text.h"

/* Only this much of a pasted text is read: an error message is short, a log is cut. */
#define TEXT_BUDGET 16384
#define WORD_MAX 128

static bool word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* The first case-insensitive occurrence of needle (nlen bytes) in hay (hlen bytes), or NULL. */
static const char *find_ci(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
    for (size_t i = 0; nlen <= hlen && i <= hlen - nlen; i++)
        if (strncasecmp(hay + i, needle, nlen) == 0)
            return hay + i;
    return NULL;
}

/* True when the line (len bytes) contains the phrase's '*'-separated parts in order. */
static bool line_has_phrase(const char *line, size_t len, const char *phrase)
{
    const char *end = line + len;
    while (*phrase) {
        size_t part = strcspn(phrase, "*");
        if (part) {
            const char *at = find_ci(line, (size_t)(end - line), phrase, part);
            if (!at)
                return false;
            line = at + part;
        }
        phrase += part + (phrase[part] == '*');
    }
    return true;
}

/* True when some line of text (its first len bytes) contains the phrase. */
static bool has_phrase(const char *text, size_t len, const char *phrase)
{
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl : end;
        if (line_has_phrase(p, (size_t)(stop - p), phrase))
            return true;
        p = stop + 1;
    }
    return false;
}

/* True when a word of text (its first len bytes) matches pattern; with exact, equals it. */
static bool has_word(const char *text, size_t len, const char *pattern, bool exact)
{
    char word[WORD_MAX];
    for (size_t i = 0; i < len;) {
        if (!word_char(text[i])) {
            i++;
            continue;
        }
        size_t n = 0;
        while (i + n < len && word_char(text[i + n]))
            n++;
        if (n < sizeof word) {
            memcpy(word, text + i, n);
            word[n] = '\0';
            if (exact ? strcasecmp(word, pattern) == 0 : fnmatch(pattern, word, FNM_CASEFOLD) == 0)
                return true;
        }
        i += n;
    }
    return false;
}

/* True when the text, spaces around it aside, is exactly the code. */
static bool is_only(const char *text, size_t len, const char *code)
{
    while (len && isspace((unsigned char)*text))
        text++, len--;
    while (len && isspace((unsigned char)text[len - 1]))
        len--;
    return len == strlen(code) && strncasecmp(text, code, len) == 0;
}

static bool code_matches(const sc_error_signature *sig, const char *text, size_t len)
{
    if (is_only(text, len, sig->code))
        return true;
    if (!has_word(text, len, sig->code, true))
        return false;
    /* A short number (100, 209) names an error only next to the API it came from. */
    return strlen(sig->code) >= 5 ||
           (sig->context && find_ci(text, len, sig->context, strlen(sig->context)));
}

bool sc_explain_matches(const sc_error_signature *sig, const char *text)
{
    size_t len = strnlen(text, TEXT_BUDGET);
    return (sig->name && has_word(text, len, sig->name, false)) ||
           (sig->code && code_matches(sig, text, len)) ||
           (sig->phrase && has_phrase(text, len, sig->phrase));
}

int sc_explain_each_match(const char *text, void (*fn)(const sc_error_signature *, void *),
                          void *arg)
{
    int count = 0;
    for (int pass = 0; pass < 2 && count == 0; pass++)
        for (const sc_error_signature *s = sc_error_signatures; s->family; s++)
            if (s->fallback == (pass == 1) && sc_explain_matches(s, text)) {
                fn(s, arg);
                count++;
            }
    return count;
}

/* Prints one covering finding: id, severity and the first sentence of its docs entry. */
static void print_finding(FILE *out, const char *id)
{
    char severity[16], line[400];
    if (sc_findings_summary(id, severity, sizeof severity, line, sizeof line) == 0)
        sc_term_printf(out, "    %s (%s): %s\n", id, severity, line);
    else
        sc_term_printf(out, "    %s\n", id);
}

/* "HIP runtime error hipErrorNoDevice (100)", "ACL error 507033", or the family and the pattern. */
static void print_headline(FILE *out, const sc_error_signature *sig)
{
    bool plain_name = sig->name && !strpbrk(sig->name, "*?[");
    if (plain_name && sig->code)
        sc_term_printf(out, "%s %s (%s)\n", sig->family, sig->name, sig->code);
    else if (plain_name || sig->code)
        sc_term_printf(out, "%s %s\n", sig->family, plain_name ? sig->name : sig->code);
    else
        sc_term_printf(out, "%s: \"%s\"\n", sig->family, sig->name ? sig->name : sig->phrase);
}

typedef struct {
    FILE *out;
    int printed;
} printer;

static void print_signature(const sc_error_signature *sig, void *arg)
{
    printer *pr = arg;
    FILE *out = pr->out;
    if (pr->printed++)
        fputc('\n', out);
    print_headline(out, sig);
    sc_term_printf(out, "  %s\n  covered by:\n", sig->meaning);
    char ids[512];
    sc_text_copy(ids, sizeof ids, sig->findings);
    char *save = NULL;
    for (char *id = strtok_r(ids, " ", &save); id; id = strtok_r(NULL, " ", &save))
        print_finding(out, id);
    sc_term_printf(out, "  check: %s\n", sig->check);
}

int sc_explain_text(FILE *out, const char *text)
{
    printer pr = {.out = out, .printed = 0};
    return sc_explain_each_match(text, print_signature, &pr);
}
