/* The decompression the offload readers share: one zlib or zstd stream inflated step by step, only
 * as far as the reader asks, with its contexts and buffer kept for the next bundle of the file.
 * Private to src/elf/offload*.c; the API is sc_offload.h. */
#ifndef SC_OFFLOAD_INTERNAL_H
#define SC_OFFLOAD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "sc_offload.h"

/* Starts inflating the stream of len bytes at src (method 0 zlib, 1 zstd) into at most cap bytes,
 * reusing list->inflater (made on first use). Returns 0 or -ENOMEM. */
int sc_inflate_begin(sc_offload_list *list, int method, const uint8_t *src, size_t len, size_t cap);
/* Inflates until want bytes of the stream are out (or it ends, or cap is reached), charging
 * list->inflated against SC_OFFLOAD_MAX_INFLATED. Returns the bytes out so far, -EINVAL when the
 * stream is damaged before any byte came out, or -EDQUOT when the budget ran out (list->budget
 * says so). */
long sc_inflate_upto(sc_offload_list *list, size_t want);
/* The bytes inflated so far. */
const uint8_t *sc_inflate_data(const sc_offload_list *list);
/* Frees the contexts and buffer kept in list. */
void sc_inflate_free(sc_offload_list *list);

#endif
