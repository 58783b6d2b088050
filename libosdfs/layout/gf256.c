/*
 * GF(2^8) arithmetic for RAID 5/6 parity: polynomial x^8+x^4+x^3+x^2+1
 * (0x11D) and generator 2, as Linux RAID-6. P is the XOR of the data units,
 * Q = sum over k of 2^k * D_k. Any two lost units of a stripe are recovered.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

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

/* dst ^= c * src over @p len bytes. */
static void mul_acc(uint8_t *dst, const uint8_t *src, uint8_t c, size_t len)
{
	const uint8_t *row;

	if (c == 1) {
		for (size_t i = 0; i < len; i++)
			dst[i] ^= src[i];
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

void lay_gf_gen(const uint8_t *const *d, unsigned nd, size_t len, uint8_t *p, uint8_t *q)
{
	memset(p, 0, len);
	if (q)
		memset(q, 0, len);
	for (unsigned k = 0; k < nd; k++) {
		mul_acc(p, d[k], 1, len);
		if (q)
			mul_acc(q, d[k], lay_gf_exp(k), len);
	}
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

int lay_gf_recover(uint8_t *const *u, unsigned nd, unsigned np, size_t len,
		   const unsigned *lost, unsigned nlost)
{
	unsigned data[2], nd_lost = 0;
	int p_lost = 0, q_lost = 0;

	if (nlost > np)
		return -EIO;
	for (unsigned i = 0; i < nlost; i++) {
		if (lost[i] < nd)
			data[nd_lost++] = lost[i];
		else if (lost[i] == nd)
			p_lost = 1;
		else
			q_lost = 1;
	}
	if (nd_lost == 2) {
		if (data[0] > data[1]) {
			unsigned t = data[0];

			data[0] = data[1];
			data[1] = t;
		}
		recover_two(u, nd, len, data[0], data[1]);
	} else if (nd_lost == 1) {
		recover_one(u, nd, len, data[0], p_lost);
	}
	if (p_lost) {
		memset(u[nd], 0, len);
		for (unsigned k = 0; k < nd; k++)
			mul_acc(u[nd], u[k], 1, len);
	}
	if (q_lost) {
		memset(u[nd + 1], 0, len);
		for (unsigned k = 0; k < nd; k++)
			mul_acc(u[nd + 1], u[k], lay_gf_exp(k), len);
	}
	return 0;
}
