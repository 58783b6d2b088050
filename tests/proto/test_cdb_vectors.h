/*
 * Known-answer CDB vectors written by hand from docs/protocol.md §3 (CDB
 * fields; osd-r10 §5.2, osd2r03 §5.2.1), §4 (service actions) and §6
 * (capability; osd-r10 §4.9.2.2, osd2r03 §4.11.2.2). Each vector is a zeroed
 * 200- or 236-byte array plus {offset, bytes} patches; the fill function
 * builds the same command as a struct osd_cdb. Shared by test_cdb.c only.
 */
#ifndef TEST_CDB_VECTORS_H
#define TEST_CDB_VECTORS_H

#include <osd/cdb.h>

struct patch {
	uint16_t off;
	uint8_t n;
	uint8_t b[32];
};

#define P(o, ...) { (o), sizeof((const uint8_t[]){ __VA_ARGS__ }), { __VA_ARGS__ } }

/* Ids used throughout: partition 0x10000, user object 0x10005, collection 0x10010. */
#define PID 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00
#define OID 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x05
#define CID 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x10
#define FF4 0xFF, 0xFF, 0xFF, 0xFF
/* List mode with no lists: the three offsets "unused". */
#define NOLISTS P(56, FF4), P(64, FF4), P(72, FF4)

/* Capabilities (docs/protocol.md §6): format, object type + permissions, descriptor type, ids. */
#define CAP1_ROOT(p0, p1) P(80, 0x01), P(128, 0x01, p0, p1), P(135, 0x20)
#define CAP1_PART(p0, p1) P(80, 0x01), P(128, 0x02, p0, p1), P(135, 0x20), P(140, PID)
#define CAP1_USER(p0, p1) P(80, 0x01), P(128, 0x80, p0, p1), P(135, 0x10), P(140, PID), P(148, OID)
#define CAP1_COLL(p0, p1) P(80, 0x01), P(128, 0x40, p0, p1), P(135, 0x10), P(140, PID), P(148, CID)
#define CAP2_ROOT(p0, p1) P(80, 0x02), P(128, 0x01, p0, p1), P(135, 0x20)
#define CAP2_PART(p0, p1) P(80, 0x02), P(128, 0x02, p0, p1), P(135, 0x20), P(152, PID)
#define CAP2_USER(p0, p1) P(80, 0x02), P(128, 0x80, p0, p1), P(135, 0x10), P(152, PID), P(160, OID)
#define CAP2_COLL(p0, p1) P(80, 0x02), P(128, 0x40, p0, p1), P(135, 0x30), P(152, PID), P(160, CID)

#define SEED20 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, \
	0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x21, 0x22, 0x23
#define KEYID7 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07

#endif
