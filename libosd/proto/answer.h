/*
 * Strict checks of what a target answered (data-in read after completion):
 * retrieved attribute lists and LIST / LIST COLLECTION / QUERY results,
 * weighed against the allocation length the command sent and the bytes
 * the transport says arrived. Internal to libosd: the request layer runs
 * them on every completed command, the codec tests and fuzzers call them
 * directly.
 *
 * Each returns 0, -EBADMSG for a malformed answer or -EPROTO when the
 * transport reports more bytes than were asked for, and on error writes
 * into @p why a sentence naming the field ("retrieved attributes list
 * length 4294967280 exceeds the 512 bytes received").
 */
#ifndef OSD_PROTO_ANSWER_H
#define OSD_PROTO_ANSWER_H

#include <stddef.h>
#include <stdint.h>
#include <osd/attr.h>
#include <osd/list.h>

/* No bound on LIST LENGTH known beyond the field itself. */
#define OSD__NO_LIST_BOUND UINT64_MAX

/*
 * A retrieved-attributes list (09h, 0Eh or 0Fh) of which @p received of
 * @p alloc bytes arrived. LIST LENGTH may exceed what arrived only when the
 * allocation was filled (the target reports the full length so that the
 * caller can ask again with more room, osd2r05 §7.1.3.1); it may never
 * exceed @p max_list, the most the requested attributes can take. Every
 * entry is walked: none may run past the list or the bytes received.
 */
int osd__attr_answer_check(enum osd_version version, const uint8_t *buf, size_t received,
			   size_t alloc, uint64_t max_list, char *why, size_t why_len);

/*
 * LIST / LIST COLLECTION (@p query 0) or QUERY (@p query 1) parameter data,
 * @p received of @p alloc bytes. ADDITIONAL LENGTH may promise more ids
 * than arrived only when the allocation is full, and for LIST only with a
 * CONTINUATION OBJECT_ID to resume from (docs/protocol.md §10); a
 * saturated ADDITIONAL LENGTH (all ones) counts as "unknown, more".
 * Object descriptor formats with attributes (-ENOTSUP from the decoder)
 * pass: osd_req_list_result() reports them.
 */
int osd__list_answer_check(enum osd_version version, int query, const uint8_t *buf,
			   size_t received, size_t alloc, char *why, size_t why_len);

#endif
