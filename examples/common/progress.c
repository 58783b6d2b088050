/*
 * A one-line progress display on stderr for long operations, redrawn in
 * place with '\r' at most ten times a second: what is done, of what total
 * when it is known (files or other items, bytes), the rate and the time
 * left. Only drawn on a terminal unless forced, so logs and pipes stay clean.
 */
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>
#include "toolcommon.h"

static double elapsed(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

void tc_progress_init(struct tc_progress *p, const char *label, int force,
		      uint64_t total_bytes)
{
	p->enabled = force || isatty(STDERR_FILENO);
	p->label = label;
	p->unit = "files";
	p->files = p->bytes = 0;
	p->total_files = 0;
	p->total_bytes = total_bytes;
	p->shown = 0;
	clock_gettime(CLOCK_MONOTONIC, &p->start);
	p->last = p->start;
}

void tc_progress_set_total(struct tc_progress *p, uint64_t files, uint64_t bytes)
{
	p->total_files = files;
	p->total_bytes = bytes;
}

/* The fraction done, by bytes when their total is known, else by items; -1: unknown. */
static double fraction(const struct tc_progress *p)
{
	if (p->total_bytes)
		return p->bytes >= p->total_bytes ? 1 : (double)p->bytes / (double)p->total_bytes;
	if (p->total_files)
		return p->files >= p->total_files ? 1 : (double)p->files / (double)p->total_files;
	return -1;
}

/* "1:02:03" or "2:03". */
static void format_duration(double secs, char *buf, size_t size)
{
	unsigned long s = secs > 0 ? (unsigned long)(secs + 0.5) : 0;

	if (s >= 3600)
		snprintf(buf, size, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, size, "%lu:%02lu", s / 60, s % 60);
}

void tc_progress_format(const struct tc_progress *p, double secs, char *buf, size_t size)
{
	char done[16], total[16], rate[16], left[24];
	double f = fraction(p);
	size_t n;

	n = (size_t)snprintf(buf, size, "%s: %" PRIu64, p->label, p->files);
	if (p->total_files && n < size)
		n += (size_t)snprintf(buf + n, size - n, " of %" PRIu64, p->total_files);
	if (n < size)
		n += (size_t)snprintf(buf + n, size - n, " %s", p->unit);
	if ((p->bytes || p->total_bytes) && n < size) {
		tc_format_size(p->bytes, done, sizeof(done));
		n += (size_t)snprintf(buf + n, size - n, ", %s", done);
		if (p->total_bytes && n < size) {
			tc_format_size(p->total_bytes, total, sizeof(total));
			n += (size_t)snprintf(buf + n, size - n, " of %s", total);
		}
	}
	if (f >= 0 && n < size)
		n += (size_t)snprintf(buf + n, size - n, " (%u%%)", (unsigned)(f * 100));
	if (secs >= 0.5 && n < size) { /* a rate over less is noise */
		if (p->bytes || p->total_bytes) {
			tc_format_size((uint64_t)((double)p->bytes / secs), rate, sizeof(rate));
			n += (size_t)snprintf(buf + n, size - n, ", %s/s", rate);
		} else {
			n += (size_t)snprintf(buf + n, size - n, ", %.0f %s/s",
					      (double)p->files / secs, p->unit);
		}
	}
	/* the time left once there is something to extrapolate from */
	if (f > 0 && f < 1 && secs >= 1 && n < size) {
		format_duration(secs * (1 - f) / f, left, sizeof(left));
		snprintf(buf + n, size - n, ", %s left", left);
	}
}

static void draw(struct tc_progress *p, const struct timespec *now)
{
	char line[256];

	tc_progress_format(p, elapsed(&p->start, now), line, sizeof(line));
	fprintf(stderr, "\r%s: %s\033[K", tc_prog(), line);
	fflush(stderr);
	p->shown = 1;
}

static void maybe_draw(struct tc_progress *p)
{
	struct timespec now;

	if (!p->enabled)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (p->shown && elapsed(&p->last, &now) < 0.1)
		return;
	p->last = now;
	draw(p, &now);
}

void tc_progress_add(struct tc_progress *p, uint64_t files, uint64_t bytes)
{
	p->files += files;
	p->bytes += bytes;
	maybe_draw(p);
}

void tc_progress_set(struct tc_progress *p, uint64_t files, uint64_t bytes)
{
	p->files = files;
	p->bytes = bytes;
	maybe_draw(p);
}

void tc_progress_end(struct tc_progress *p, int summary)
{
	struct timespec now;

	if (!p->enabled || !p->shown)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (summary) {
		draw(p, &now);
		fputc('\n', stderr);
	} else {
		fputs("\r\033[K", stderr);
	}
	fflush(stderr);
}
