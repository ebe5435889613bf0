/* `stackcheck libs [--arch ARCH]... [--json FILE] [--sysroot DIR] FILE...`: the libraries analysis
 * of any ELF file, printed as a dependency tree like libtree's with the findings under it.
 * Exit 0 clean (warnings allowed), 1 a finding of error severity, 2 usage or unreadable input. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_cli.h"
#include "sc_json.h"
#include "sc_libs.h"
#include "sc_options.h"
#include "sc_redact.h"
#include "sc_snapshot.h"
#include "sc_text.h"

static const char usage[] =
    "usage: stackcheck libs [--arch ARCH]... [--json FILE] [--sysroot DIR] [--ld-library-path "
    "PATH]\n"
    "                      [--no-symbols] FILE...\n"
    "  --arch ARCH     a target device architecture (gfx90a:xnack-, sm_90); repeatable\n"
    "  --json FILE     write {\"files\":[...]} to FILE (- = standard output)\n"
    "  --sysroot DIR   resolve every path inside DIR (LD_LIBRARY_PATH too)\n"
    "  --ld-library-path PATH  the LD_LIBRARY_PATH the loader would see (default: the "
    "environment's)\n"
    "  --no-symbols    skip the undefined-symbol check\n"
    "Exit: 0 clean, 1 a finding of error severity, 2 usage error or unreadable/non-ELF file.\n";

typedef struct {
    sc_strlist archs;
    const char *json;
    const char *sysroot;
    const char *ld_library_path;
    bool no_symbols;
} libs_options;

static int parse(int argc, char **argv, libs_options *o)
{
    static const struct option longs[] = {{"arch", required_argument, NULL, 'a'},
                                          {"json", required_argument, NULL, 'j'},
                                          {"sysroot", required_argument, NULL, 's'},
                                          {"no-symbols", no_argument, NULL, 'n'},
                                          {"ld-library-path", required_argument, NULL, 'L'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    opterr = 0; /* sc_cli_bad_option says it, escaped */
    while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (c) {
        case 'a':
            if (sc_strlist_add(&o->archs, optarg) < 0) {
                fputs("stackcheck libs: too many --arch\n", stderr);
                return SC_EXIT_USAGE;
            }
            break;
        case 'j': o->json = optarg; break;
        case 's': o->sysroot = optarg; break;
        case 'n': o->no_symbols = true; break;
        case 'L': o->ld_library_path = optarg; break;
        case 'h': fputs(usage, stdout); return 1;
        default: return sc_cli_bad_option("libs", c, argv);
        }
    }
    if (optind >= argc) {
        fputs(usage, stderr);
        return SC_EXIT_USAGE;
    }
    return 0;
}

/* One line of the tree, taken from the JSON once so the printer does not search it. */
typedef struct {
    const char *name, *path, *needed_by, *via;
    int depth;
} tree_row;

/* Prints the children of `parent` (rows it needed first), depth first. */
static void print_children(FILE *out, const tree_row *rows, int n, const char *parent, int depth,
                           char *prefix, size_t plen)
{
    int last = -1;
    for (int i = 0; i < n; i++)
        if (rows[i].depth == depth && strcmp(rows[i].needed_by, parent) == 0)
            last = i;
    for (int i = 0; i <= last; i++) {
        const tree_row *r = &rows[i];
        if (r->depth != depth || strcmp(r->needed_by, parent) != 0)
            continue;
        fprintf(out, "%s%s", prefix, i == last ? "└── " : "├── ");
        if (!r->path) {
            sc_term_printf(out, "%s not found\n", r->name);
            continue;
        }
        sc_term_printf(out, "%s => %s [%s]\n", r->name, r->path, r->via);
        if (plen + 8 < 4096 && depth < 64) {
            strcpy(prefix + plen, i == last ? "    " : "│   ");
            print_children(out, rows, n, r->path, depth + 1, prefix, strlen(prefix));
            prefix[plen] = '\0';
        }
    }
}

static void print_tree(FILE *out, const cJSON *libs, const char *path)
{
    int n = cJSON_GetArraySize(libs), i = 0;
    tree_row *rows = calloc((size_t)n + 1, sizeof *rows);
    if (!rows)
        return;
    const cJSON *l;
    cJSON_ArrayForEach (l, libs) {
        tree_row *r = &rows[i++];
        r->name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(l, "name"));
        r->path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(l, "path"));
        r->needed_by = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(l, "needed_by"));
        r->via = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(l, "found_via"));
        r->depth = cJSON_GetObjectItemCaseSensitive(l, "depth")->valueint;
        if (!r->needed_by)
            r->needed_by = "";
    }
    char prefix[4096] = "";
    print_children(out, rows, n, path, 1, prefix, 0);
    free(rows);
}

static void print_findings(FILE *out, const cJSON *findings)
{
    const cJSON *f;
    cJSON_ArrayForEach (f, findings) {
        sc_term_printf(out, "  %s %s: %s\n", sc_json_str(f, "severity"), sc_json_str(f, "id"),
                       sc_json_str(f, "message"));
        if (sc_json_str(f, "hint"))
            sc_term_printf(out, "      hint: %s\n", sc_json_str(f, "hint"));
    }
}

static void print_file(FILE *out, const cJSON *file)
{
    const char *path = sc_json_str(file, "path");
    sc_term_printf(out, "%s", path);
    if (sc_json_str(file, "soname"))
        sc_term_printf(out, " (%s)", sc_json_str(file, "soname"));
    sc_term_printf(out, " [%s]\n", sc_json_str(file, "root_kind"));
    print_tree(out, sc_json_member(file, "libraries"), path);
    const cJSON *off = sc_json_member(file, "offload");
    const char *format = sc_json_str(off, "format");
    if (format) {
        sc_term_printf(out, "  GPU code (%s):", format);
        const cJSON *t;
        int i = 0;
        cJSON_ArrayForEach (t, sc_json_member(off, "targets")) {
            sc_term_printf(out, "%s%s", i++ ? ", " : " ", t->valuestring);
        }
        fputc('\n', out);
    }
    print_findings(out, sc_json_member(file, "findings"));
}

/* Analyses each file into files[]; returns the exit code so far. */
static int analyse_all(const sc_root *root, const libs_options *o, char **paths, int n,
                       cJSON *files, FILE *out)
{
    sc_libs_config cfg = {.archs = o->archs.items,
                          .arch_count = o->archs.count,
                          .ld_library_path =
                              o->ld_library_path ? o->ld_library_path : getenv("LD_LIBRARY_PATH"),
                          .no_symbol_check = o->no_symbols};
    int rc = SC_EXIT_OK;
    for (int i = 0; i < n; i++) {
        cJSON *file = NULL;
        sc_error err = {0};
        /* Isolated: a file truncated under its mapping (SIGBUS), a hung file system or a
         * demangler on a hostile name costs that file's analysis, with a clear error. */
        if (sc_libs_analyze_isolated(root, paths[i], &cfg, SC_LIBS_TIMEOUT_S, &file, &err) < 0) {
            sc_print_line(stderr, "stackcheck libs: ", "%s", err.message);
            rc = SC_EXIT_USAGE;
            continue;
        }
        sc_redact_json(file); /* the one door out, before it is printed or written */
        if (out)
            print_file(out, file);
        if (sc_libs_worst(file) == SC_SEV_ERROR && rc == SC_EXIT_OK)
            rc = SC_EXIT_FAIL;
        cJSON_AddItemToArray(files, file);
    }
    return rc;
}

int sc_cmd_libs(int argc, char **argv)
{
    libs_options o;
    memset(&o, 0, sizeof o);
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc == 1 ? SC_EXIT_OK : rc;
    sc_root root;
    sc_error err = {0};
    if (sc_root_open(&root, o.sysroot, &err) < 0) {
        sc_print_line(stderr, "stackcheck libs: ", "%s", err.message);
        return SC_EXIT_USAGE;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON *files = cJSON_AddArrayToObject(doc, "files");
    FILE *out = (o.json && strcmp(o.json, "-") == 0) ? stderr : stdout;
    rc = analyse_all(&root, &o, argv + optind, argc - optind, files, out);
    if (o.json && sc_snapshot_write(doc, o.json, &err) < 0) {
        sc_print_line(stderr, "stackcheck libs: ", "%s", err.message);
        rc = SC_EXIT_USAGE;
    }
    cJSON_Delete(doc);
    sc_root_close(&root);
    return rc;
}
