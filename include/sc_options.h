/* The parsed command line: everything a run needs to know about what the user asked. */
#ifndef SC_OPTIONS_H
#define SC_OPTIONS_H

#include <stdbool.h>

#define SC_MAX_LIST 64

typedef struct {
    const char *items[SC_MAX_LIST];
    int count;
} sc_strlist;

/* --progress: auto (a status line on a terminal, "still running" lines off one), always (as on a
 * terminal), never. */
typedef enum { SC_PROGRESS_AUTO, SC_PROGRESS_ALWAYS, SC_PROGRESS_NEVER } sc_progress;

typedef struct {
    const char *sysroot;     /* NULL: the live system */
    const char *json_path;   /* NULL: no snapshot file; "-": standard output */
    const char *junit_path;  /* NULL: no JUnit file */
    bool keep_going;         /* run probes above a failed layer too */
    double timeout_s;        /* per-probe deadline; <= 0: each probe's own default */
    bool color;              /* colour the human report */
    int verbosity;           /* -1 quiet, 0 normal, 1 verbose */
    const char *hip_library; /* --hip-library: the HIP runtime file to load */
    const char *python;      /* --python: interpreter to inspect; NULL: python3 on PATH */
    sc_strlist ext;          /* --ext FILE|DIR: user extensions for the libraries layer */
    sc_strlist imports;      /* --import MODULE: user modules for the framework layer */
    sc_strlist archs;        /* --arch: target architectures for the libraries layer */
    const char *app_cmd;     /* --app CMD */
    const char *app_script;  /* --app-script FILE.py */
    int app_repeat;          /* --app-repeat N (>= 1) */
    int jobs;                /* --jobs N: probes run at once; 1 (the default here): one by one */
    sc_progress progress;    /* --progress: the live report's status lines */
    bool app_profile;        /* --app-profile: the script's last repetition under the profiler */
    const char *app_trace;   /* --app-trace FILE: its Chrome trace (implies --app-profile) */
    int collective_ranks;    /* --collective-ranks N; 0: one per device */
    bool passive;            /* capture: the passive probes only, as offline, on any root */
    int argc;                /* the original command line, for the snapshot */
    char **argv;
    /* Clusters: metrics, Slurm, the run's own deadline. */
    const char *prometheus_path; /* --prometheus FILE: node_exporter textfile metrics */
    bool slurm;                  /* --slurm: drain or resume this node through scontrol */
    const char *scontrol;        /* --scontrol PATH (default: scontrol on PATH) */
    double deadline_s;           /* --deadline: the whole run's; <= 0: none */
    double deadline_ms;          /* monotonic time (sc_now_ms) it ends at; 0: none */
} sc_options;

/* Sets every option to its default. */
void sc_options_init(sc_options *opt);
/* Appends item to list; returns 0, or -E2BIG when the list is full. */
int sc_strlist_add(sc_strlist *list, const char *item);
/* The deadline of one isolated probe whose own is default_s: --timeout when given, else default_s,
 * cut to what is left of the run's --deadline (so the whole run ends in time). */
double sc_opt_probe_timeout(const sc_options *opt, double default_s);
/* True when the run's --deadline has passed: probes not yet started are skipped. */
bool sc_opt_deadline_passed(const sc_options *opt);

#endif
