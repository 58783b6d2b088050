/*
 * GF(2^8) arithmetic for RAID 5/6 parity: polynomial x^8+x^4+x^3+x^2+1
 * (0x11D) and generator 2, as Linux RAID-6. P is the XOR of the data units,
 * Q = sum over k of 2^k * D_k. Any two lost units of a stripe are recovered.
 *
 * Two implementations give the same bytes: ISA-L's SIMD code (pq_gen and
 * xor_gen for P/Q, ec_encode_data for P/Q of unaligned buffers and for
 * recovery) when the build found libisal, and our portable code (64-bit
 * words for P and Q, a multiplication table for recovery), always built.
 * docs/layout.md ("Parity code") has the measurements behind the choice.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#ifdef OSD_HAVE_ISAL
#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>
#endif

#include "layout/layout_int.h"

static uint8_t gf_log[256], gf_exp[512];
static uint8_t gf_mul_tab[256][256]; /* gf_mul_tab[c][v] = c * v */
static pthread_once_t gf_once = PTHREAD_ONCE_INIT;

static void gf_init(void)
{
	unsigned x = 1;

	for (unsigned i = 0; i < 255; i++) {
		gf_exp[i] = gf_exp[i + 255] = (uint8_t)x;
		gf_log[x] = (uint8_t)i;
		x <<= 1;
		if (x & 0x100)
			x ^= 0x11D;
	}
	for (unsigned c = 1; c < 256; c++)
		for (unsigned v = 1; v < 256; v++)
			gf_mul_tab[c][v] = gf_exp[gf_log[c] + gf_log[v]];
}

uint8_t lay_gf_mul(uint8_t a, uint8_t b)
{
	pthread_once(&gf_once, gf_init);
	if (a == 0 || b == 0)
		return 0;
	return gf_exp[gf_log[a] + gf_log[b]];
}

uint8_t lay_gf_exp(unsigned e)
{
	pthread_once(&gf_once, gf_init);
	return gf_exp[e % 255];
}

uint8_t lay_gf_inv(uint8_t a)
{
	pthread_once(&gf_once, gf_init);
	return a ? gf_exp[255 - gf_log[a]] : 0;
}

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void store64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* 2 * each of the 8 bytes of @p v (shift, and reduce the bytes that overflowed). */
static uint64_t mul2_bytes(uint64_t v)
{
	uint64_t hi = v & 0x8080808080808080ull;

	return ((v << 1) & 0xfefefefefefefefeull) ^ ((hi >> 7) * 0x1d);
}

void lay_gf_xor(uint8_t *dst, const uint8_t *src, size_t len)
{
	size_t i = 0;

	for (; i + 8 <= len; i += 8)
		store64(dst + i, load64(dst + i) ^ load64(src + i));
	for (; i < len; i++)
		dst[i] ^= src[i];
}

/* dst ^= c * src over @p len bytes. */
static void mul_acc(uint8_t *dst, const uint8_t *src, uint8_t c, size_t len)
{
	const uint8_t *row;

	if (c == 1) {
		lay_gf_xor(dst, src, len);
		return;
	}
	pthread_once(&gf_once, gf_init);
	row = gf_mul_tab[c];
	for (size_t i = 0; i < len; i++)
		dst[i] ^= row[src[i]];
}

static void scale(uint8_t *buf, uint8_t c, size_t len)
{
	const uint8_t *row;

	pthread_once(&gf_once, gf_init);
	row = gf_mul_tab[c];
	for (size_t i = 0; i < len; i++)
		buf[i] = row[buf[i]];
}

/* Bytes [from, len): P by XOR, Q by Horner's rule from the last unit down
 * (Q = ((D_{n-1} * 2 + D_{n-2}) * 2 + ...) + D_0), 8 bytes at a time as
 * Linux's int64 RAID-6 code does. */
static void gen_words(const uint8_t *const *d, unsigned nd, size_t from, size_t len, uint8_t *p,
		      uint8_t *q)
{
	size_t i = from;

	if (!q) { /* P alone: XOR only */
		memcpy(p + from, d[0] + from, len - from);
		for (unsigned k = 1; k < nd; k++)
			lay_gf_xor(p + from, d[k] + from, len - from);
		return;
	}
	for (; i + 8 <= len; i += 8) {
		uint64_t wp = load64(d[nd - 1] + i), wq = wp;

		for (unsigned k = nd - 1; k-- > 0;) {
			uint64_t w = load64(d[k] + i);

			wp ^= w;
			wq = mul2_bytes(wq) ^ w;
		}
		store64(p + i, wp);
		if (q)
			store64(q + i, wq);
	}
	for (; i < len; i++) {
		uint8_t bp = d[nd - 1][i], bq = bp;

		for (unsigned k = nd - 1; k-- > 0;) {
			bp ^= d[k][i];
			bq = (uint8_t)(lay_gf_mul(bq, 2) ^ d[k][i]);
		}
		p[i] = bp;
		if (q)
			q[i] = bq;
	}
}

void lay_gf_gen_portable(const uint8_t *const *d, unsigned nd, size_t len, uint8_t *p,
			 uint8_t *q)
{
	if (nd == 0) {
		memset(p, 0, len);
		if (q)
			memset(q, 0, len);
		return;
	}
	gen_words(d, nd, 0, len, p, q);
}

/* Syndromes without the lost data units: u[x] = P ^ (other data),
 * u[y] (or scratch) = Q ^ sum 2^k (other data). */
static void partial_syndromes(uint8_t *const *u, unsigned nd, size_t len, unsigned x,
			      unsigned y, uint8_t *sp, uint8_t *sq)
{
	memcpy(sp, u[nd], len);
	if (sq)
		memcpy(sq, u[nd + 1], len);
	for (unsigned k = 0; k < nd; k++) {
		if (k == x || k == y)
			continue;
		mul_acc(sp, u[k], 1, len);
		if (sq)
			mul_acc(sq, u[k], lay_gf_exp(k), len);
	}
}

/* One data unit lost: from P if it survives, else from Q. */
static void recover_one(uint8_t *const *u, unsigned nd, size_t len, unsigned x, int p_lost)
{
	if (!p_lost) {
		partial_syndromes(u, nd, len, x, x, u[x], NULL);
		return;
	}
	/* u[x] = (Q ^ sum of 2^k * the others) * 2^-x */
	memcpy(u[x], u[nd + 1], len);
	for (unsigned k = 0; k < nd; k++)
		if (k != x)
			mul_acc(u[x], u[k], lay_gf_exp(k), len);
	scale(u[x], lay_gf_inv(lay_gf_exp(x)), len);
}

/* Two data units x < y lost, P and Q present. */
static void recover_two(uint8_t *const *u, unsigned nd, size_t len, unsigned x, unsigned y)
{
	uint8_t gyx = lay_gf_exp(y - x), denom = lay_gf_inv((uint8_t)(gyx ^ 1));
	uint8_t a = lay_gf_mul(gyx, denom), b = lay_gf_mul(lay_gf_inv(lay_gf_exp(x)), denom);

	/* u[x] <- Pxy, u[y] <- Qxy; then Dx = a*Pxy + b*Qxy and Dy = Pxy + Dx */
	const uint8_t *ra = gf_mul_tab[a], *rb = gf_mul_tab[b];

	partial_syndromes(u, nd, len, x, y, u[x], u[y]);
	for (size_t i = 0; i < len; i++) {
		uint8_t pxy = u[x][i], qxy = u[y][i];
		uint8_t dx = (uint8_t)(ra[pxy] ^ rb[qxy]);

		u[x][i] = dx;
		u[y][i] = (uint8_t)(pxy ^ dx);
	}
}

/* Which of the units are lost: data indexes (sorted), and P or Q; -EIO when
 * more are lost than @p np parity units can give back. */
static int classify_lost(unsigned nd, unsigned np, const unsigned *lost, unsigned nlost,
			 unsigned data[2], unsigned *nd_lost, int *p_lost, int *q_lost)
{
	*nd_lost = 0;
	*p_lost = *q_lost = 0;
	if (nlost > np)
		return -EIO;
	for (unsigned i = 0; i < nlost; i++) {
		if (lost[i] < nd)
			data[(*nd_lost)++] = lost[i];
		else if (lost[i] == nd)
			*p_lost = 1;
		else
			*q_lost = 1;
	}
	if (*nd_lost == 2 && data[0] > data[1]) {
		unsigned t = data[0];

		data[0] = data[1];
		data[1] = t;
	}
	return 0;
}

int lay_gf_recover_portable(uint8_t *const *u, unsigned nd, unsigned np, size_t len,
			    const unsigned *lost, unsigned nlost)
{
	unsigned data[2], nd_lost;
	int p_lost, q_lost;

	if (classify_lost(nd, np, lost, nlost, data, &nd_lost, &p_lost, &q_lost) < 0)
		return -EIO;
	if (nd_lost == 2)
		recover_two(u, nd, len, data[0], data[1]);
	else if (nd_lost == 1)
		recover_one(u, nd, len, data[0], p_lost);
	if (p_lost)
		gen_words((const uint8_t *const *)u, nd, 0, len, u[nd], NULL);
	if (q_lost) {
		memset(u[nd + 1], 0, len);
		for (unsigned k = 0; k < nd; k++)
			mul_acc(u[nd + 1], u[k], lay_gf_exp(k), len);
	}
	return 0;
}

#ifdef OSD_HAVE_ISAL
int lay_gf_have_isal(void)
{
	return 1;
}

#define ISAL_ALIGN 32u /* raid.h: pq_gen/xor_gen buffers and lengths */

static int aligned32(const uint8_t *const *d, unsigned n, const uint8_t *p, const uint8_t *q)
{
	uintptr_t or = (uintptr_t)p | (uintptr_t)q;

	for (unsigned k = 0; k < n; k++)
		or |= (uintptr_t)d[k];
	return (or & (ISAL_ALIGN - 1)) == 0;
}

/* Parity rows of the generator matrix: P = 1 x each unit, Q = 2^k x unit k. */
static void parity_coeffs(unsigned nd, unsigned j, uint8_t *row)
{
	for (unsigned k = 0; k < nd; k++)
		row[k] = j ? lay_gf_exp(k) : 1;
}

/* ec_encode_data() with @p rows rows of coefficients over @p nd sources. */
static void ec_apply(const uint8_t *coeff, unsigned nd, unsigned rows, size_t len,
		     const uint8_t *const *src, uint8_t **dst)
{
	uint8_t tbls[32 * OSDFS_LAYOUT_MAX_DEVICES * 2];

	ec_init_tables((int)nd, (int)rows, (unsigned char *)coeff, tbls);
	ec_encode_data((int)len, (int)nd, (int)rows, tbls, (unsigned char **)src, dst);
}

void lay_gf_gen(const uint8_t *const *d, unsigned nd, size_t len, uint8_t *p, uint8_t *q)
{
	size_t n = len & ~(size_t)(ISAL_ALIGN - 1);
	const void *v[OSDFS_LAYOUT_MAX_DEVICES + 2];
	uint8_t coeff[2 * OSDFS_LAYOUT_MAX_DEVICES], *out[2] = { p, q };

	if (nd < 2 || len > INT32_MAX) {
		lay_gf_gen_portable(d, nd, len, p, q);
		return;
	}
	if (!aligned32(d, nd, p, q ? q : p) || n == 0) {
		/* ec_encode_data takes any alignment and length */
		parity_coeffs(nd, 0, coeff);
		parity_coeffs(nd, 1, coeff + nd);
		ec_apply(coeff, nd, q ? 2 : 1, len, d, out);
		return;
	}
	memcpy(v, d, nd * sizeof(*d));
	v[nd] = p;
	v[nd + 1] = q;
	if (q)
		pq_gen((int)nd + 2, (int)n, (void **)v);
	else
		xor_gen((int)nd + 1, (int)n, (void **)v);
	if (n < len) /* the tail under 32 bytes */
		gen_words(d, nd, n, len, p, q);
}

/* Coefficients of each lost unit over nd surviving ones: the rows of the
 * generator matrix (identity for data, then P and Q) of the lost units times
 * the inverse of the survivors' rows. */
static int decode_matrix(unsigned nd, unsigned np, const int *is_lost, unsigned *surv,
			 const unsigned *lostv, unsigned nl, uint8_t *coeff)
{
	uint8_t m[OSDFS_LAYOUT_MAX_DEVICES * OSDFS_LAYOUT_MAX_DEVICES];
	uint8_t inv[OSDFS_LAYOUT_MAX_DEVICES * OSDFS_LAYOUT_MAX_DEVICES];
	uint8_t g[OSDFS_LAYOUT_MAX_DEVICES];
	unsigned ns = 0;

	for (unsigned x = 0; x < nd + np && ns < nd; x++)
		if (!is_lost[x])
			surv[ns++] = x;
	if (ns < nd)
		return -EIO;
	for (unsigned r = 0; r < nd; r++) {
		memset(m + r * nd, 0, nd);
		if (surv[r] < nd)
			m[r * nd + surv[r]] = 1;
		else
			parity_coeffs(nd, surv[r] - nd, m + r * nd);
	}
	if (gf_invert_matrix(m, inv, (int)nd) != 0)
		return -EIO; /* not for these rows: any nd of them are independent */
	for (unsigned l = 0; l < nl; l++) {
		memset(g, 0, nd);
		if (lostv[l] < nd)
			g[lostv[l]] = 1;
		else
			parity_coeffs(nd, lostv[l] - nd, g);
		for (unsigned j = 0; j < nd; j++) {
			uint8_t c = 0;

			for (unsigned i = 0; i < nd; i++)
				c ^= lay_gf_mul(g[i], inv[i * nd + j]);
			coeff[l * nd + j] = c;
		}
	}
	return 0;
}

int lay_gf_recover(uint8_t *const *u, unsigned nd, unsigned np, size_t len,
		   const unsigned *lost, unsigned nlost)
{
	int is_lost[OSDFS_LAYOUT_MAX_DEVICES + 2] = { 0 };
	unsigned surv[OSDFS_LAYOUT_MAX_DEVICES], lostv[2], nl = 0;
	uint8_t coeff[2 * OSDFS_LAYOUT_MAX_DEVICES];
	const uint8_t *src[OSDFS_LAYOUT_MAX_DEVICES];
	uint8_t *dst[2];

	if (nlost > np)
		return -EIO;
	if (nd == 0 || len > INT32_MAX)
		return lay_gf_recover_portable(u, nd, np, len, lost, nlost);
	for (unsigned i = 0; i < nlost; i++) {
		if (lost[i] >= nd + np)
			return -EINVAL;
		if (!is_lost[lost[i]]++)
			lostv[nl++] = lost[i];
	}
	if (nl == 0)
		return 0;
	if (decode_matrix(nd, np, is_lost, surv, lostv, nl, coeff) < 0)
		return -EIO;
	for (unsigned i = 0; i < nd; i++)
		src[i] = u[surv[i]];
	for (unsigned l = 0; l < nl; l++)
		dst[l] = u[lostv[l]];
	ec_apply(coeff, nd, nl, len, src, dst);
	return 0;
}
#else
int lay_gf_have_isal(void)
{
	return 0;
}

void lay_gf_gen(const uint8_t *const *d, unsigned nd, size_t len, uint8_t *p, uint8_t *q)
{
	lay_gf_gen_portable(d, nd, len, p, q);
}

int lay_gf_recover(uint8_t *const *u, unsigned nd, unsigned np, size_t len,
		   const unsigned *lost, unsigned nlost)
{
	return lay_gf_recover_portable(u, nd, np, len, lost, nlost);
}
#endif
