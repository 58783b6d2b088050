/*
 * A one-line progress display on stderr for long operations, redrawn in
 * place with '\r' at most ten times a second. Only drawn on a terminal
 * unless forced, so logs and pipes stay clean.
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
	p->files = p->bytes = 0;
	p->total_bytes = total_bytes;
	p->shown = 0;
	clock_gettime(CLOCK_MONOTONIC, &p->start);
	p->last = p->start;
}

static void draw(struct tc_progress *p, const struct timespec *now)
{
	char done[16], rate[16];
	double secs = elapsed(&p->start, now);

	tc_format_size(p->bytes, done, sizeof(done));
	tc_format_size(secs > 0 ? (uint64_t)((double)p->bytes / secs) : 0, rate, sizeof(rate));
	fprintf(stderr, "\r%s: %s: %" PRIu64 " files, %s", tc_prog(), p->label, p->files, done);
	if (p->total_bytes) {
		char total[16];

		tc_format_size(p->total_bytes, total, sizeof(total));
		fprintf(stderr, " of %s (%u%%)", total,
			(unsigned)(p->bytes >= p->total_bytes ? 100 : p->bytes * 100 / p->total_bytes));
	}
	fprintf(stderr, ", %s/s\033[K", rate);
	fflush(stderr);
	p->shown = 1;
}

void tc_progress_add(struct tc_progress *p, uint64_t files, uint64_t bytes)
{
	struct timespec now;

	p->files += files;
	p->bytes += bytes;
	if (!p->enabled)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (elapsed(&p->last, &now) < 0.1)
		return;
	p->last = now;
	draw(p, &now);
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
