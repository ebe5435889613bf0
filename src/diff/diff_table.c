/* The platforms table as text: one row a role, side a then side b in two columns (a long cell
 * of a moves b to the next line), every cell escaped for the terminal; and which changes of the
 * list the table sums up when the two sides run on different backends. */
#include <stdio.h>
#include <string.h>

#include "sc_diff.h"
#include "sc_text.h"

#define ROLE_WIDTH 12
#define CELL_WIDTH_MAX 46

/* Characters (not bytes) of s, as a terminal advances over them. */
static size_t width_of(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

static const char *cell_text(const cJSON *row, const char *side)
{
    const char *s = cJSON_GetStringValue(sc_diff_get(row, side));
    return s ? s : "(none)";
}

static void pad(FILE *out, size_t n)
{
    while (n-- > 0)
        fputc(' ', out);
}

/* The widest cell of side a that fits CELL_WIDTH_MAX. */
static size_t column_width(const cJSON *rows)
{
    size_t w = 1;
    const cJSON *row;
    cJSON_ArrayForEach (row, rows) {
        size_t n = width_of(cell_text(row, "a"));
        if (n > w && n <= CELL_WIDTH_MAX) /* a longer cell wraps instead */
            w = n;
    }
    return w;
}

static void print_row(FILE *out, const char *role, const char *a, const char *b, size_t width)
{
    sc_term_printf(out, "  %.*s", 40, role);
    pad(out, ROLE_WIDTH > width_of(role) ? ROLE_WIDTH - width_of(role) : 1);
    sc_term_printf(out, "%.*s", 400, a);
    if (width_of(a) > width) { /* b goes under its column on the next line */
        fputc('\n', out);
        pad(out, 2 + ROLE_WIDTH + width);
    } else {
        pad(out, width - width_of(a));
    }
    sc_term_printf(out, "  %.*s\n", 400, b);
}

void sc_diff_print_platforms(FILE *out, const cJSON *platforms)
{
    const cJSON *rows = sc_diff_get(platforms, "rows"), *row;
    if (!cJSON_IsTrue(sc_diff_get(platforms, "differ")) || !cJSON_IsArray(rows))
        return;
    size_t width = column_width(rows);
    fputs("\nPlatforms:\n", out);
    print_row(out, "", "a", "b", width);
    cJSON_ArrayForEach (row, rows) {
        const char *role = cJSON_GetStringValue(sc_diff_get(row, "role"));
        if (!role ||
            (!cJSON_IsString(sc_diff_get(row, "a")) && !cJSON_IsString(sc_diff_get(row, "b"))))
            continue; /* unknown on both sides */
        print_row(out, role, cell_text(row, "a"), cell_text(row, "b"), width);
    }
}

void sc_diff_index_summarised(sc_diff_index *ix, const cJSON *platforms)
{
    const cJSON *id;
    if (!cJSON_IsTrue(sc_diff_get(platforms, "differ")))
        return;
    cJSON_ArrayForEach (id, sc_diff_get(platforms, "summarised"))
        sc_diff_index_add(ix, cJSON_GetStringValue(id), NULL, id);
}

const char *sc_diff_summed_up(sc_diff_index *ix, const char *what)
{
    char probe[128];
    size_t n = what ? strcspn(what, " ") : 0;
    if (n == 0 || n >= sizeof probe || ix->count == 0)
        return NULL;
    memcpy(probe, what, n);
    probe[n] = '\0';
    return cJSON_GetStringValue(sc_diff_index_find(ix, probe, NULL));
}
