/* `stackcheck fleet`: many nodes' snapshots read one at a time and folded into what the cluster
 * needs to know: the stacks by fingerprint (the majority and how each other group differs from
 * it), the failed nodes by first failing layer and finding, and the per-fact outliers among nodes
 * of one stack. Each snapshot is freed once folded in; what is kept grows with the number of
 * distinct stacks and failure causes, each with a bounded list of node names. */
#ifndef SC_FLEET_H
#define SC_FLEET_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sc_types.h"

#define SC_FLEET_SCHEMA "stackcheck/fleet/v1"
#define SC_FLEET_NAMES_KEPT 64  /* node names kept per group, cause or list; the rest counted */
#define SC_FLEET_GROUPS_MAX 512 /* distinct stacks kept; nodes beyond are counted apart */
#define SC_FLEET_CAUSES_MAX 256 /* distinct failure causes kept */
#define SC_FLEET_METRICS_MAX 48 /* timed facts followed per group */
#define SC_FLEET_SAMPLE 64      /* values of one fact sampled per group for its median */
#define SC_FLEET_EXTREMES 8     /* the slowest nodes of one fact kept per group */
#define SC_FLEET_MAX_INPUT (64u << 20) /* a snapshot larger than this is skipped, not parsed */
#define SC_FLEET_DEFAULT_FACTOR 3.0

/* Up to SC_FLEET_NAMES_KEPT names and how many more there were. */
typedef struct {
    char *names[SC_FLEET_NAMES_KEPT];
    int count;
    long more;
} sc_fleet_names;

/* A node whose value is among the largest of a fact in its group. */
typedef struct {
    double value;
    char *node;
} sc_fleet_extreme;

/* One timed or measured fact of a group: a sample for its median, the largest values. */
typedef struct {
    char *name;  /* "runtime.hip duration", "runtime.hip timing.load_init_ms", "memory in use" */
    bool memory; /* bytes (an outlier is far from the median either way), else milliseconds */
    long seen;
    double sample[SC_FLEET_SAMPLE];
    double total_bytes; /* memory: the largest device memory total seen, for "far" */
    sc_fleet_extreme high[SC_FLEET_EXTREMES], low[SC_FLEET_EXTREMES];
} sc_fleet_metric;

/* One distinct stack and the nodes that run it. */
typedef struct {
    uint64_t hash;
    char *key;
    cJSON *stack; /* sc_stack_of */
    long nodes;
    sc_fleet_names names;
    sc_fleet_metric *metrics[SC_FLEET_METRICS_MAX];
    int metric_count;
} sc_fleet_group;

/* Failed nodes of one first failing layer and finding (or probe and status). */
typedef struct {
    char *layer, *finding, *probe, *status;
    long nodes;
    sc_fleet_names names;
} sc_fleet_cause;

typedef struct {
    double factor; /* a timing beyond factor x its group's median is an outlier */
    long files, nodes, failed, ungrouped, skipped;
    sc_fleet_group *groups[SC_FLEET_GROUPS_MAX];
    int group_count;
    sc_fleet_cause *causes[SC_FLEET_CAUSES_MAX];
    int cause_count;
    long causes_dropped;
    cJSON *skipped_files; /* [{file, reason}], the first SC_FLEET_NAMES_KEPT */
    bool oom;
} sc_fleet;

/* An empty fleet. */
void sc_fleet_init(sc_fleet *fleet, double factor);
/* Frees everything the fleet holds. */
void sc_fleet_free(sc_fleet *fleet);
/* Reads one file: a snapshot is folded in, anything else is recorded as skipped with why. */
void sc_fleet_add_file(sc_fleet *fleet, const char *path);
/* Reads every path: a directory's *.json files (not hidden, not recursive), or a file. Returns 0,
 * or -errno when a path given cannot be read at all (it is recorded as skipped too). */
int sc_fleet_add_path(sc_fleet *fleet, const char *path);
/* Folds one checked snapshot (name: the node's) into the fleet. */
void sc_fleet_add_snapshot(sc_fleet *fleet, const cJSON *snapshot, const char *name);
/* Records a file that was skipped and why. */
void sc_fleet_skip(sc_fleet *fleet, const char *path, const char *reason);
/* Adds name to a bounded list of names (copied). */
void sc_fleet_names_add(sc_fleet_names *names, const char *name, bool *oom);
/* The names as a sorted JSON array, "+N more" last when some were not kept. */
cJSON *sc_fleet_names_json(sc_fleet_names *names);
/* Frees the names. */
void sc_fleet_names_free(sc_fleet_names *names);
/* Adds the timed and measured facts of a healthy node's snapshot to its group. */
void sc_fleet_measure(sc_fleet *fleet, sc_fleet_group *group, const cJSON *snapshot,
                      const char *name);
/* Frees one group's metrics. */
void sc_fleet_metrics_free(sc_fleet_group *group);
/* The outliers of every group: [{node, fact, unit, value, median, why}] (also the groups that
 * differ from the majority only in their device count). majority may be NULL. *complete is false
 * when every value kept of some fact was an outlier: more nodes than SC_FLEET_EXTREMES may be. */
cJSON *sc_fleet_outliers(sc_fleet *fleet, const sc_fleet_group *majority, bool *complete);
/* The whole answer as JSON: {schema, files, nodes, healthy, failed, skipped{count, files[]},
 * majority, groups[{nodes, names[], majority, stack{}, differs[{role, majority[], group[]}]}],
 * ungrouped, failures[{layer, finding, probe, status, nodes, names[]}], outliers[], identical,
 * exit_code}. NULL when out of memory. */
cJSON *sc_fleet_result(sc_fleet *fleet);
/* Prints the answer as text (escaped for a terminal). */
void sc_fleet_print(FILE *out, const cJSON *result);

#endif
