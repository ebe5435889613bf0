/* The redactor's scanner: one pass over a text that copies it with every credential replaced by
 * "[redacted]", each value to its end (a value is never stopped at '/', '@' or ':'): private key
 * blocks, the userinfo of URLs, values of secret-looking names ("password=", "X-Api-Key: ...",
 * "--token X"), -u user:pw, the password options of a few programs, Bearer and Basic credentials
 * and tokens of a well-known shape. Hosts of internal networks in URLs are hidden too. */
#include "sc_redact.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sc_util.h"

#define REDACTED "[redacted]"
#define NAME_MAX_LEN 64 /* a longer run before '=' or ':' is not taken for a name */
#define SCHEME_MAX 32
#define LOOKBACK 256 /* how far back a program name is looked for before a -p option */

typedef struct {
    const char *s;
    size_t n;
    sc_buf *out;
    size_t checked_until; /* the lines before this start no orphan key body */
} scan;

/* A token of a well-known shape: the prefix, then at least min_rest characters that are
 * alphanumeric or in extra. */
typedef struct {
    const char *prefix;
    size_t min_rest;
    const char *extra;
} token_shape;

static const token_shape token_shapes[] = {
    {"ghp_", 20, ""},    {"gho_", 20, ""},         {"ghs_", 20, ""},     {"ghu_", 20, ""},
    {"ghr_", 20, ""},    {"github_pat_", 20, "_"}, {"glpat-", 20, "_-"}, {"hf_", 20, ""},
    {"sk-", 20, "_-"},   {"xoxb-", 10, "-"},       {"xoxp-", 10, "-"},   {"xoxa-", 10, "-"},
    {"AKIA", 16, ""},    {"ASIA", 16, ""},         {"AIza", 30, "_-"},   {"npm_", 30, ""},
    {"pypi-", 40, "_-"}, {"eyJ", 17, "_-."},
};

/* Programs whose short option takes a password: sshpass -p PW, mysql -pPW (attached only: with a
 * space, mysql prompts and the next word is the database), redis-cli -a PW. */
typedef struct {
    const char *program;
    char option;
    bool attached_only;
} password_option;

static const password_option password_options[] = {
    {"sshpass", 'p', false},   {"mysql", 'p', true},   {"mysqldump", 'p', true},
    {"mysqladmin", 'p', true}, {"mariadb", 'p', true}, {"mariadb-dump", 'p', true},
    {"redis-cli", 'a', false},
};

/* Authentication schemes kept in front of a redacted header value ("Authorization: Bearer ..."). */
static const char *const auth_schemes[] = {"Bearer ", "Basic ",     "Token ",
                                           "Digest ", "Negotiate ", NULL};

static const char *const internal_suffixes[] = {".internal", ".corp",     ".local",   ".lan",
                                                ".intra",    ".intranet", ".private", NULL};

static bool is_word(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static bool is_name_char(char c)
{
    return is_word(c) || c == '-' || c == '.';
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static bool is_space(char c)
{
    return is_blank(c) || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_quote(char c)
{
    return c == '"' || c == '\'' || c == '`';
}

static void emit(scan *sc, const char *p, size_t n)
{
    sc_buf_append(sc->out, p, n);
}

static void emit_redacted(scan *sc)
{
    emit(sc, REDACTED, strlen(REDACTED));
}

static size_t skip_blanks(const scan *sc, size_t i)
{
    while (i < sc->n && is_blank(sc->s[i]))
        i++;
    return i;
}

enum value_kind { VALUE_WORD, VALUE_QUERY, VALUE_LINE };

/* Where the value that starts at i ends. A quoted value runs to its closing quote (backslash
 * escapes honoured) or the end of the line; a bare one to whitespace or a quote (VALUE_WORD), also
 * to '&' or '#' (VALUE_QUERY), or to the end of the line or " | ", where lines of output were
 * joined into one (VALUE_LINE, "name: value"), or to the quote that closes a string the name
 * opened ('Authorization: Basic x' stops at the quote). */
static size_t value_end(const scan *sc, size_t i, enum value_kind kind, char enclosing)
{
    const char *s = sc->s;
    if (i < sc->n && is_quote(s[i])) {
        size_t j = i + 1;
        for (; j < sc->n && s[j] != s[i] && s[j] != '\n'; j++)
            if (s[j] == '\\' && j + 1 < sc->n)
                j++;
        return j < sc->n && s[j] == s[i] ? j + 1 : j;
    }
    size_t j = i;
    for (; j < sc->n && s[j] != '\n' && s[j] != '\r'; j++) {
        if (kind != VALUE_LINE && (is_space(s[j]) || is_quote(s[j])))
            break;
        if (kind == VALUE_LINE && sc->n - j >= 3 && memcmp(s + j, " | ", 3) == 0)
            break; /* where sc_app_one_line joined two lines */
        if ((kind == VALUE_QUERY && (s[j] == '&' || s[j] == '#')) ||
            (enclosing && s[j] == enclosing))
            break;
    }
    return j;
}

/* Emits the value [i, end) redacted, keeping the quotes around a quoted one. */
static void emit_value_redacted(scan *sc, size_t i, size_t end)
{
    const char *s = sc->s;
    bool quoted = is_quote(s[i]);
    if (quoted)
        emit(sc, s + i, 1);
    emit_redacted(sc);
    if (quoted && end - i >= 2 && s[end - 1] == s[i])
        emit(sc, s + end - 1, 1);
}

/* "-----BEGIN LABEL-----" or "-----END LABEL-----" at i: its length (0 when it is not one),
 * whether it begins a block and whether the label names a private key. */
static size_t armor_line(const scan *sc, size_t i, bool *begin, bool *private_key)
{
    const char *s = sc->s;
    size_t n = sc->n, j = i + 5;
    if (n - i < 5 || memcmp(s + i, "-----", 5) != 0)
        return 0;
    if (n - j >= 6 && memcmp(s + j, "BEGIN ", 6) == 0)
        *begin = true, j += 6;
    else if (n - j >= 4 && memcmp(s + j, "END ", 4) == 0)
        *begin = false, j += 4;
    else
        return 0;
    size_t label = j;
    while (j < n && j - label <= 80 &&
           (isupper((unsigned char)s[j]) || isdigit((unsigned char)s[j]) || s[j] == ' '))
        j++;
    if (j == label || j - label > 80 || n - j < 5 || memcmp(s + j, "-----", 5) != 0)
        return 0;
    *private_key = memmem(s + label, j - label, "PRIVATE KEY", 11) != NULL;
    return j + 5 - i;
}

/* A private key block from its BEGIN line through its END line (or the end of the text). */
static size_t try_key_block(scan *sc, size_t i)
{
    bool begin, private_key;
    size_t len = armor_line(sc, i, &begin, &private_key);
    if (!len || !begin || !private_key)
        return 0;
    size_t j = i + len;
    const char *end;
    while ((end = memmem(sc->s + j, sc->n - j, "-----END ", 9)) != NULL) {
        j = (size_t)(end - sc->s);
        size_t end_len = armor_line(sc, j, &begin, &private_key);
        if (end_len && private_key) {
            j += end_len;
            break;
        }
        j++;
    }
    emit_redacted(sc);
    return end ? j - i : sc->n - i;
}

/* The start of the next line when the line at i holds only base64 characters, else 0. */
static size_t base64_line(const scan *sc, size_t i)
{
    size_t j = i;
    while (j < sc->n && (isalnum((unsigned char)sc->s[j]) || strchr("+/=", sc->s[j])))
        j++;
    if (j < sc->n && sc->s[j] == '\r')
        j++;
    return j > i && j < sc->n && sc->s[j] == '\n' ? j + 1 : 0;
}

/* At the start of a line: base64 lines followed by the END line of a private key whose BEGIN
 * line is missing (the text began inside the key) are its body, redacted through the END line. */
static size_t try_orphan_key(scan *sc, size_t i)
{
    size_t j = i, next;
    if (i < sc->checked_until)
        return 0;
    while ((next = base64_line(sc, j)) != 0)
        j = next;
    bool begin, private_key;
    size_t len = j > i ? armor_line(sc, j, &begin, &private_key) : 0;
    if (!len || begin || !private_key) {
        sc->checked_until = j; /* the lines of this run start no key body either */
        return 0;
    }
    emit_redacted(sc);
    return j + len - i;
}

/* A private IPv4 literal (10/8, 172.16/12, 192.168/16) or an internal DNS suffix. */
static bool host_is_internal(const char *h, size_t n)
{
    char host[256];
    if (n == 0 || n >= sizeof host)
        return false;
    memcpy(host, h, n);
    host[n] = '\0';
    unsigned a, b, c, d;
    if (sscanf(host, "%u.%u.%u.%u", &a, &b, &c, &d) == 4)
        return a == 10 || (a == 172 && b >= 16 && b <= 31) || (a == 192 && b == 168);
    for (int i = 0; internal_suffixes[i]; i++)
        if (sc_ends_with(host, internal_suffixes[i]))
            return true;
    return false;
}

static size_t authority_end(const scan *sc, size_t i)
{
    while (i < sc->n && !strchr("/?#<>", sc->s[i]) && !is_space(sc->s[i]) && !is_quote(sc->s[i]))
        i++;
    return i;
}

/* The '@' that ends a URL's userinfo, or 0 when there is none: the last '@' of the authority
 * ("u:p@ss@host"). When the authority holds a ':' that is not a port's, a password may also hold
 * '/', which ends the authority early ("user:pa/ss@host"): then the last '@' before the next
 * whitespace counts, hiding too much rather than a part of the password. */
static size_t userinfo_at(const scan *sc, size_t auth, size_t aend)
{
    const char *s = sc->s, *colon = memchr(s + auth, ':', aend - auth);
    size_t limit = aend;
    if (colon) {
        size_t k = (size_t)(colon - s) + 1;
        while (k < aend && isdigit((unsigned char)s[k]))
            k++;
        while (k != aend && limit < sc->n && limit - aend < 256 && !is_space(s[limit]) &&
               !is_quote(s[limit]))
            limit++;
    }
    for (size_t k = limit; k > auth; k--)
        if (s[k - 1] == '@')
            return k - 1;
    return 0;
}

/* "scheme://[userinfo@]host[:port]": userinfo redacted, an internal host hidden. */
static size_t try_url(scan *sc, size_t i)
{
    const char *s = sc->s;
    size_t j = i;
    while (j < sc->n && j - i <= SCHEME_MAX &&
           (isalnum((unsigned char)s[j]) || s[j] == '+' || s[j] == '.' || s[j] == '-'))
        j++;
    if (j == i || j - i > SCHEME_MAX || sc->n - j < 3 || memcmp(s + j, "://", 3) != 0)
        return 0;
    size_t auth = j + 3, aend = authority_end(sc, auth), at = userinfo_at(sc, auth, aend);
    emit(sc, s + i, auth - i);
    size_t host = auth;
    if (at) {
        emit(sc, REDACTED "@", strlen(REDACTED) + 1);
        host = at + 1;
        if (at >= aend)
            aend = authority_end(sc, host);
    }
    size_t hlen = host;
    while (hlen < aend && s[hlen] != ':')
        hlen++;
    hlen -= host;
    if (host_is_internal(s + host, hlen)) {
        emit(sc, "[internal-host]", 15);
        emit(sc, s + host + hlen, aend - host - hlen);
    } else {
        emit(sc, s + host, aend - host);
    }
    return aend - i;
}

/* The value after a secret name and its separator ('=' or ':' at i), e.g. "password=x",
 * "\"token\": \"x\"", "Authorization: Bearer x", "?sig=x&". */
static size_t try_pair(scan *sc, size_t i)
{
    const char *s = sc->s;
    size_t end = i;
    while (end > 0 && is_blank(s[end - 1]))
        end--;
    char close = end > 0 && is_quote(s[end - 1]) ? s[--end] : 0;
    size_t start = end;
    while (start > 0 && end - start <= NAME_MAX_LEN && is_name_char(s[start - 1]))
        start--;
    if (start == end || end - start > NAME_MAX_LEN ||
        (close && (start == 0 || s[start - 1] != close)))
        return 0;
    if (!sc_secret_name(s + start, end - start))
        return 0;
    char before = start > (close ? 1u : 0u) ? s[start - (close ? 2 : 1)] : 0;
    enum value_kind kind = s[i] == ':'                                       ? VALUE_LINE
                           : before == '?' || before == '&' || before == ';' ? VALUE_QUERY
                                                                             : VALUE_WORD;
    char enclosing = !close && is_quote(before) ? before : 0;
    size_t v = skip_blanks(sc, i + 1), vend = value_end(sc, v, kind, enclosing);
    if (vend == v)
        return 0;
    emit(sc, s + i, v - i);
    for (int k = 0; kind == VALUE_LINE && !is_quote(s[v]) && auth_schemes[k]; k++) {
        size_t len = strlen(auth_schemes[k]);
        if (vend - v > len && strncasecmp(s + v, auth_schemes[k], len) == 0) {
            emit(sc, s + v, len);
            v += len;
            break;
        }
    }
    emit_value_redacted(sc, v, vend);
    return vend - i;
}

/* True when one of the words in the command segment before i (back to ';', '|', '&' or a line
 * break) is program, by its base name: "sshpass" in "env X=1 /usr/bin/sshpass -p". */
static bool segment_runs(const scan *sc, size_t i, const char *program)
{
    const char *s = sc->s;
    size_t start = i, plen = strlen(program);
    while (start > 0 && i - start < LOOKBACK && !strchr(";|&\n", s[start - 1]))
        start--;
    for (size_t w = start; w < i;) {
        while (w < i && (is_space(s[w]) || is_quote(s[w]) || s[w] == '('))
            w++;
        size_t e = w, base = w;
        while (e < i && !is_space(s[e]) && !is_quote(s[e]))
            if (s[e++] == '/')
                base = e;
        if (e - base == plen && memcmp(s + base, program, plen) == 0)
            return true;
        w = e;
    }
    return false;
}

/* The option at i with the value "user:password" at [v, vend): the password redacted, unless
 * both sides are numbers (a uid:gid, as docker -u 1000:1000 takes). 0 when there is no ':'. */
static size_t try_user_password(scan *sc, size_t i, size_t v, size_t vend)
{
    const char *s = sc->s, *colon = memchr(s + v, ':', vend - v);
    if (!colon || (size_t)(colon - s) + 1 == vend)
        return 0;
    size_t c = (size_t)(colon - s);
    if (strspn(s + v, "0123456789") == c - v && strspn(s + c + 1, "0123456789") == vend - c - 1)
        return 0;
    emit(sc, s + i, c + 1 - i);
    emit_redacted(sc);
    return vend - i;
}

/* A short option at i ('-' and one letter): -u user:pw (curl, wget), and the password options of
 * password_options, attached (-pPW) or as the next word. */
static size_t try_short_option(scan *sc, size_t i)
{
    const char *s = sc->s;
    char letter = s[i + 1];
    if (!strchr("upa", letter))
        return 0;
    bool attached = i + 2 < sc->n && !is_space(s[i + 2]);
    size_t v = attached ? i + 2 : skip_blanks(sc, i + 2), vend = value_end(sc, v, VALUE_WORD, 0);
    if (vend == v || (!attached && s[v] == '-'))
        return 0;
    if (letter == 'u')
        return try_user_password(sc, i, v, vend);
    for (size_t k = 0; k < sizeof password_options / sizeof password_options[0]; k++) {
        const password_option *po = &password_options[k];
        if (po->option != letter || (po->attached_only && !attached) ||
            !segment_runs(sc, i, po->program))
            continue;
        emit(sc, s + i, v - i);
        emit_value_redacted(sc, v, vend);
        return vend - i;
    }
    return 0;
}

/* A long option at i: --NAME VALUE or --NAME=VALUE where NAME looks secret (--password,
 * --api-key, --token), and --user / --proxy-user user:pw. */
static size_t try_long_option(scan *sc, size_t i)
{
    const char *s = sc->s;
    size_t ns = i + 2, ne = ns;
    while (ne < sc->n && ne - ns <= NAME_MAX_LEN && is_name_char(s[ne]))
        ne++;
    if (ne == ns || ne - ns > NAME_MAX_LEN)
        return 0;
    bool user = (ne - ns == 4 && memcmp(s + ns, "user", 4) == 0) ||
                (ne - ns > 5 && memcmp(s + ne - 5, "-user", 5) == 0);
    if (!user && !sc_secret_name(s + ns, ne - ns))
        return 0;
    bool equals = ne < sc->n && s[ne] == '=';
    size_t v = equals ? ne + 1 : skip_blanks(sc, ne), vend = value_end(sc, v, VALUE_WORD, 0);
    if (vend == v || (!equals && (v == ne || s[v] == '-')))
        return 0;
    if (user)
        return try_user_password(sc, i, v, vend);
    emit(sc, s + i, v - i);
    emit_value_redacted(sc, v, vend);
    return vend - i;
}

/* "-----BEGIN ... PRIVATE KEY-----" blocks and options, at a '-' that starts a word. */
static size_t try_dash(scan *sc, size_t i)
{
    size_t used = try_key_block(sc, i);
    if (used || (i > 0 && !is_space(sc->s[i - 1]) && !is_quote(sc->s[i - 1])) || i + 1 >= sc->n)
        return used;
    if (sc->s[i + 1] == '-')
        return try_long_option(sc, i);
    return isalpha((unsigned char)sc->s[i + 1]) ? try_short_option(sc, i) : 0;
}

/* True when [v, vend) looks like a Basic credential rather than a word of prose: base64
 * characters, at least 8, with a digit, '+', '/', '=' or a capital after the first character. */
static bool looks_base64(const char *s, size_t v, size_t vend)
{
    if (vend - v < 8)
        return false;
    bool mixed = false;
    for (size_t k = v; k < vend; k++) {
        char c = s[k];
        if (!isalnum((unsigned char)c) && c != '+' && c != '/' && c != '=')
            return false;
        mixed |= isdigit((unsigned char)c) || c == '+' || c == '/' || c == '=' ||
                 (k > v && isupper((unsigned char)c));
    }
    return mixed;
}

/* "Bearer X" and "Basic X" outside a header line. */
static size_t try_auth_scheme(scan *sc, size_t i)
{
    const char *s = sc->s;
    size_t kw = strncasecmp(s + i, "bearer", 6) == 0 ? 6 : strncmp(s + i, "Basic", 5) == 0 ? 5 : 0;
    if (!kw || i + kw >= sc->n || !is_blank(s[i + kw]))
        return 0;
    size_t v = skip_blanks(sc, i + kw), vend = value_end(sc, v, VALUE_WORD, 0);
    if (vend == v || (kw == 5 && !looks_base64(s, v, vend)))
        return 0;
    emit(sc, s + i, v - i);
    emit_value_redacted(sc, v, vend);
    return vend - i;
}

/* A token of one of token_shapes at i, through the end of its word. */
static size_t try_token_shape(scan *sc, size_t i)
{
    const char *s = sc->s;
    size_t word = i;
    while (word < sc->n && (is_word(s[word]) || s[word] == '-' || s[word] == '.'))
        word++;
    for (size_t k = 0; k < sizeof token_shapes / sizeof token_shapes[0]; k++) {
        const token_shape *t = &token_shapes[k];
        size_t plen = strlen(t->prefix), j = i + plen;
        if (word - i < plen + t->min_rest || strncmp(s + i, t->prefix, plen) != 0)
            continue;
        while (j < word && (isalnum((unsigned char)s[j]) || strchr(t->extra, s[j])))
            j++;
        if (j - i - plen < t->min_rest || (t->prefix[0] == 'e' && !memchr(s + i, '.', j - i)))
            continue;
        emit_redacted(sc);
        return j - i;
    }
    return 0;
}

/* What starts at an alphanumeric character at the start of a word. */
static size_t try_word(scan *sc, size_t i)
{
    size_t used = isalpha((unsigned char)sc->s[i]) ? try_url(sc, i) : 0;
    if (!used)
        used = try_auth_scheme(sc, i);
    if (!used && (i == 0 || sc->s[i - 1] != '.'))
        used = try_token_shape(sc, i); /* a token runs through dots: never start inside one */
    return used;
}

/* What a rule makes of the text at i: the bytes it consumed (its output emitted), or 0. */
static size_t try_rules(scan *sc, size_t i)
{
    const char *s = sc->s;
    char c = s[i];
    size_t used = i == 0 || s[i - 1] == '\n' ? try_orphan_key(sc, i) : 0;
    if (used)
        return used;
    if (c == '-')
        return try_dash(sc, i);
    if (isalnum((unsigned char)c) && (i == 0 || !(is_word(s[i - 1]) || s[i - 1] == '-')))
        return try_word(sc, i);
    if (c == '=' || c == ':')
        return try_pair(sc, i);
    return 0;
}

char *sc_redact_text(const char *s, size_t n)
{
    sc_buf out;
    sc_buf_init(&out);
    sc_buf_append(&out, "", 0);
    scan sc = {s, n, &out, 0};
    for (size_t i = 0; i < n;) {
        size_t used = try_rules(&sc, i);
        if (!used) {
            emit(&sc, s + i, 1);
            used = 1;
        }
        i += used;
    }
    if (out.oom) {
        sc_buf_free(&out);
        return NULL;
    }
    return out.data;
}
