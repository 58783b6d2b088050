/*
 * Parallel dispatch: one FIFO of jobs per device slot, each served by a few
 * worker threads, so the component operations of one call run on every
 * device at once even when the children are synchronous (mem, loopback).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "layout/layout_int.h"

struct lay_queue {
	struct lay_job *head, *tail;
	pthread_cond_t cv; /* this queue's workers wait here */
};

struct lay_pool {
	pthread_mutex_t mu;
	int stop;
	unsigned nq, nthreads;
	struct lay_queue *q;
	pthread_t *threads;
	unsigned *thread_q; /* queue served by each thread */
};

struct worker_arg {
	struct lay_pool *p;
	unsigned q;
};

static struct lay_job *take(struct lay_pool *p, unsigned q)
{
	struct lay_job *j = p->q[q].head;

	if (j) {
		p->q[q].head = j->next;
		if (!j->next)
			p->q[q].tail = NULL;
	}
	return j;
}

static void finish(struct lay_job *j)
{
	struct lay_batch *b = j->batch;

	pthread_mutex_lock(&b->mu);
	if (--b->pending == 0)
		pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

static void *worker(void *arg)
{
	struct lay_pool *p = ((struct worker_arg *)arg)->p;
	unsigned q = ((struct worker_arg *)arg)->q;
	struct lay_job *j;

	free(arg);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && !p->q[q].head)
			pthread_cond_wait(&p->q[q].cv, &p->mu);
		if (p->stop)
			break;
		j = take(p, q);
		pthread_mutex_unlock(&p->mu);
		j->fn(j);
		finish(j);
		pthread_mutex_lock(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static int start_threads(struct lay_pool *p, unsigned per)
{
	for (unsigned i = 0; i < p->nq * per; i++) {
		struct worker_arg *a = malloc(sizeof(*a));

		if (!a)
			return -ENOMEM;
		a->p = p;
		a->q = i / per;
		if (pthread_create(&p->threads[i], NULL, worker, a) != 0) {
			free(a);
			return -EAGAIN;
		}
		p->nthreads++;
	}
	return 0;
}

int lay_pool_new(struct lay_pool **out, unsigned nqueues, unsigned workers_per_queue)
{
	struct lay_pool *p = calloc(1, sizeof(*p));
	int rc;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->mu, NULL);
	p->q = calloc(nqueues, sizeof(*p->q));
	p->threads = calloc((size_t)nqueues * workers_per_queue, sizeof(*p->threads));
	if (!p->q || !p->threads) {
		free(p->q);
		p->q = NULL;
		lay_pool_free(p);
		return -ENOMEM;
	}
	p->nq = nqueues;
	for (unsigned i = 0; i < nqueues; i++)
		pthread_cond_init(&p->q[i].cv, NULL);
	rc = start_threads(p, workers_per_queue);
	if (rc < 0) {
		lay_pool_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

void lay_pool_free(struct lay_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	for (unsigned i = 0; i < p->nq; i++)
		pthread_cond_broadcast(&p->q[i].cv);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	for (unsigned i = 0; i < p->nq; i++)
		pthread_cond_destroy(&p->q[i].cv);
	pthread_mutex_destroy(&p->mu);
	free(p->threads);
	free(p->q);
	free(p);
}

void lay_batch_init(struct lay_batch *b)
{
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	b->pending = 0;
}

void lay_batch_destroy(struct lay_batch *b)
{
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
}

void lay_pool_run(struct lay_pool *p, unsigned q, struct lay_batch *b, struct lay_job *j)
{
	j->batch = b;
	j->next = NULL;
	pthread_mutex_lock(&b->mu);
	b->pending++;
	pthread_mutex_unlock(&b->mu);
	pthread_mutex_lock(&p->mu);
	if (p->q[q].tail)
		p->q[q].tail->next = j;
	else
		p->q[q].head = j;
	p->q[q].tail = j;
	pthread_cond_signal(&p->q[q].cv);
	pthread_mutex_unlock(&p->mu);
}

void lay_batch_wait(struct lay_batch *b)
{
	pthread_mutex_lock(&b->mu);
	while (b->pending)
		pthread_cond_wait(&b->cv, &b->mu);
	pthread_mutex_unlock(&b->mu);
}
