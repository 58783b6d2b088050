/* Metadata records and the group-committed metadata log (see log.h). */
#include "store/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/byteorder.h"
#include "checksum/crc32c.h"

/* Records are written out once this much is buffered, even without a sync. */
#define LOG_WRITE_CHUNK (1u << 20)
/* While write-outs fail (a full filesystem), records stay buffered up to this. */
#define LOG_BUF_MAX (64u << 20)

size_t osd__rec_parse(const uint8_t *buf, size_t avail, struct osd__rec *rec)
{
	if (avail < OSD__REC_HDR)
		return 0;
	uint32_t len = osd__get_be32(buf + 4);
	if (len > OSD__REC_MAX_PAYLOAD || avail - OSD__REC_HDR < len)
		return 0;
	if (osd__crc32c(0, buf + 4, 5 + (size_t)len) != osd__get_be32(buf))
		return 0;
	rec->type = buf[8];
	rec->len = len;
	rec->payload = buf + OSD__REC_HDR;
	return OSD__REC_HDR + (size_t)len;
}

void osd__rec_encode(uint8_t *dst, uint8_t type, const void *p1, size_t l1,
		     const void *p2, size_t l2)
{
	osd__put_be32(dst + 4, (uint32_t)(l1 + l2));
	dst[8] = type;
	if (l1)
		memcpy(dst + OSD__REC_HDR, p1, l1);
	if (l2)
		memcpy(dst + OSD__REC_HDR + l1, p2, l2);
	osd__put_be32(dst, osd__crc32c(0, dst + 4, 5 + l1 + l2));
}

void osd__file_hdr_put_ver(uint8_t hdr[OSD__FILE_HDR], const char magic[8], uint32_t version,
			   uint32_t flags, uint64_t epoch)
{
	memset(hdr, 0, OSD__FILE_HDR);
	memcpy(hdr, magic, 8);
	osd__put_be32(hdr + 8, version);
	osd__put_be32(hdr + 12, flags);
	osd__put_be64(hdr + 16, epoch);
	osd__put_be32(hdr + 28, osd__crc32c(0, hdr, 28));
}

void osd__file_hdr_put(uint8_t hdr[OSD__FILE_HDR], const char magic[8], uint64_t epoch)
{
	osd__file_hdr_put_ver(hdr, magic, OSD__FORMAT_VERSION, 0, epoch);
}

int osd__file_hdr_get_ver(const uint8_t hdr[OSD__FILE_HDR], const char magic[8],
			  uint32_t *version, uint32_t *flags, uint64_t *epoch)
{
	if (memcmp(hdr, magic, 8) != 0 || osd__get_be32(hdr + 28) != osd__crc32c(0, hdr, 28))
		return -EUCLEAN;
	*version = osd__get_be32(hdr + 8);
	*flags = osd__get_be32(hdr + 12);
	*epoch = osd__get_be64(hdr + 16);
	return 0;
}

int osd__log_init(struct osd__log *lg, int fd, uint64_t end)
{
	memset(lg, 0, sizeof(*lg));
	lg->cap = LOG_WRITE_CHUNK + OSD__REC_HDR + OSD__REC_MAX_PAYLOAD;
	lg->buf = malloc(lg->cap);
	if (!lg->buf)
		return -ENOMEM;
	pthread_mutex_init(&lg->mu, NULL);
	pthread_cond_init(&lg->cv, NULL);
	lg->fd = fd;
	lg->file_end = end;
	lg->synced = end;
	lg->rewrite = UINT64_MAX;
	return 0;
}

void osd__log_destroy(struct osd__log *lg)
{
	if (lg->fd >= 0)
		close(lg->fd);
	free(lg->buf);
	pthread_mutex_destroy(&lg->mu);
	pthread_cond_destroy(&lg->cv);
	lg->buf = NULL;
	lg->fd = -1;
}

/* Tell the owner when write-outs start or stop failing. mu held. */
static void log_state(struct osd__log *lg, int e)
{
	if (!e == !lg->failing)
		return;
	lg->failing = e;
	if (lg->event)
		lg->event(lg->event_arg, e);
}

/*
 * Write [rewrite, file_end) of the file again, from the page cache: after a
 * failed fdatasync (ENOSPC) the kernel may have marked those pages clean
 * without storing them. mu held.
 */
static int log_rewrite(struct osd__log *lg)
{
	uint8_t tmp[65536];
	while (lg->rewrite < lg->file_end) {
		size_t want = lg->file_end - lg->rewrite < sizeof(tmp) ?
			      (size_t)(lg->file_end - lg->rewrite) : sizeof(tmp);
		ssize_t n = pread(lg->fd, tmp, want, (off_t)lg->rewrite);
		if (n > 0)
			n = pwrite(lg->fd, tmp, (size_t)n, (off_t)lg->rewrite);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		lg->rewrite += (uint64_t)n;
	}
	lg->rewrite = UINT64_MAX;
	return 0;
}

/* Write the buffer to the file. Called with mu held. */
static int log_write_out(struct osd__log *lg)
{
	size_t done = 0;
	int e = lg->rewrite != UINT64_MAX ? log_rewrite(lg) : 0;
	while (!e && done < lg->len) {
		ssize_t n = pwrite(lg->fd, lg->buf + done, lg->len - done,
				   (off_t)(lg->file_end + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			e = n < 0 ? -errno : -EIO;
		else
			done += (size_t)n;
	}
	/* What was not written stays buffered and is tried again later. */
	memmove(lg->buf, lg->buf + done, lg->len - done);
	lg->len -= done;
	lg->file_end += done;
	log_state(lg, e);
	return e;
}

/* Room for @p need more bytes: write out, or (that failing) grow the buffer. mu held. */
static int log_room(struct osd__log *lg, size_t need)
{
	if (lg->len + need <= lg->cap)
		return 0;
	int e = log_write_out(lg);
	if (!e && lg->len + need <= lg->cap)
		return 0;
	size_t cap = lg->cap * 2;
	uint8_t *nb = cap <= LOG_BUF_MAX ? realloc(lg->buf, cap) : NULL;
	if (!nb)
		return e ? e : -ENOMEM;
	lg->buf = nb;
	lg->cap = cap;
	return 0;
}

int osd__log_append(struct osd__log *lg, uint8_t type, const void *p1, size_t l1,
		    const void *p2, size_t l2, uint64_t *pos)
{
	return osd__log_append_at(lg, type, p1, l1, p2, l2, pos, NULL);
}

int osd__log_append_at(struct osd__log *lg, uint8_t type, const void *p1, size_t l1,
		       const void *p2, size_t l2, uint64_t *pos, uint64_t *file_off)
{
	size_t need = OSD__REC_HDR + l1 + l2;
	if (l1 + l2 > OSD__REC_MAX_PAYLOAD)
		return -EINVAL;
	pthread_mutex_lock(&lg->mu);
	int r = lg->err;
	if (!r && (r = log_room(lg, need)) != 0)
		lg->err = r; /* the caller changed memory already: this record is lost */
	if (!r) {
		osd__rec_encode(lg->buf + lg->len, type, p1, l1, p2, l2);
		if (file_off)
			*file_off = lg->file_end + lg->len;
		lg->len += need;
		if (pos)
			*pos = lg->base + lg->file_end + lg->len;
		if (lg->len >= LOG_WRITE_CHUNK)
			(void)log_write_out(lg); /* a failure keeps it buffered */
	}
	pthread_mutex_unlock(&lg->mu);
	return r;
}

int osd__log_write_out(struct osd__log *lg)
{
	pthread_mutex_lock(&lg->mu);
	int r = lg->err;
	if (!r && (lg->len || lg->rewrite != UINT64_MAX))
		r = log_write_out(lg);
	pthread_mutex_unlock(&lg->mu);
	return r;
}

uint64_t osd__log_end(struct osd__log *lg)
{
	pthread_mutex_lock(&lg->mu);
	uint64_t end = lg->base + lg->file_end + lg->len;
	pthread_mutex_unlock(&lg->mu);
	return end;
}

uint64_t osd__log_written(struct osd__log *lg)
{
	pthread_mutex_lock(&lg->mu);
	uint64_t end = lg->base + lg->file_end;
	pthread_mutex_unlock(&lg->mu);
	return end;
}

/*
 * A failed write-out or fdatasync. Running out of space heals: after a
 * failed fdatasync the bytes not known durable are written again before the
 * next one. Anything else (EIO) leaves the file state unknown, so it stays.
 * mu held.
 */
static void sync_failed(struct osd__log *lg, int r, int in_fdatasync, uint64_t goal)
{
	if (r != -ENOSPC && r != -EDQUOT) {
		lg->err = r;
		return;
	}
	uint64_t from = lg->synced - lg->base;
	if (in_fdatasync && goal > lg->synced && from < lg->rewrite)
		lg->rewrite = from;
	log_state(lg, r);
}

int osd__log_sync(struct osd__log *lg, uint64_t pos)
{
	int r = 0;
	pthread_mutex_lock(&lg->mu);
	if (pos == UINT64_MAX)
		pos = lg->base + lg->file_end + lg->len;
	while (lg->synced < pos) {
		if (lg->err) {
			r = lg->err;
			break;
		}
		if (lg->syncing) {
			pthread_cond_wait(&lg->cv, &lg->mu);
			continue;
		}
		/* Become the committer for everything appended so far. */
		lg->syncing = 1;
		r = log_write_out(lg);
		int written = !r;
		uint64_t goal = lg->base + lg->file_end;
		int fd = lg->fd;
		int (*pre)(void *) = lg->pre_sync;
		pthread_mutex_unlock(&lg->mu);
		int pr = written && pre ? pre(lg->pre_sync_arg) : 0;
		if (pr)
			r = pr; /* not the log's failure: nothing to write again */
		else if (written && fdatasync(fd) != 0)
			r = -errno;
		pthread_mutex_lock(&lg->mu);
		lg->syncing = 0;
		if (r && !pr && fd == lg->fd)
			sync_failed(lg, r, written, goal);
		else if (!r && goal > lg->synced)
			lg->synced = goal;
		pthread_cond_broadcast(&lg->cv);
		if (r)
			break; /* waiters try again themselves */
	}
	pthread_mutex_unlock(&lg->mu);
	return r;
}

void osd__log_switch(struct osd__log *lg, int fd, uint64_t end)
{
	pthread_mutex_lock(&lg->mu);
	while (lg->syncing)
		pthread_cond_wait(&lg->cv, &lg->mu);
	uint64_t logical_end = lg->base + lg->file_end + lg->len;
	if (lg->fd >= 0)
		close(lg->fd);
	lg->fd = fd;
	lg->len = 0;
	lg->base = logical_end > end ? logical_end - end : 0;
	lg->file_end = end;
	lg->synced = lg->base + end;
	lg->err = 0;
	lg->rewrite = UINT64_MAX;
	log_state(lg, 0);
	pthread_cond_broadcast(&lg->cv);
	pthread_mutex_unlock(&lg->mu);
}
